"""Reassemble a streamed chat completion from its server-sent ``chat.completion.chunk`` events.

`read_chunks` turns the event stream into the ``chat.completion`` body a non-streamed request
would have returned, so `agents.client.completion.completion_from_body` reads both the same way.
Nothing here talks HTTP: it reads lines, as an HTTP response yields them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable
from typing import Any

from agents.client.completion import MalformedResponse, TextSink

DONE = "[DONE]"


class StreamState:
    """What a stream has delivered so far (the caller reports it when the stream breaks)."""

    def __init__(self) -> None:
        self.events = 0
        self.parts: list[str] = []
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.model: str | None = None
        self.id: str | None = None
        self.done = False

    def body(self) -> dict[str, Any]:
        """The equivalent ``chat.completion`` body."""
        message = {"role": "assistant", "content": "".join(self.parts)}
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason}
        body: dict[str, Any] = {"object": "chat.completion", "choices": [choice]}
        for key, value in (("id", self.id), ("model", self.model), ("usage", self.usage)):
            if value is not None:
                body[key] = value
        return body


async def read_chunks(
    lines: AsyncIterable[str], on_text: TextSink, state: StreamState | None = None
) -> dict[str, Any]:
    """Read SSE lines up to ``data: [DONE]``, passing each content delta to ``on_text`` as it
    arrives; return the equivalent ``chat.completion`` body.

    Raises MalformedResponse for an event that is not a JSON chunk, an ``error`` event, or a
    stream that ends before ``[DONE]`` or without a finish_reason. ``state`` (optional) is
    filled in as the stream goes, so a caller can say how far a broken stream got.
    """
    state = state if state is not None else StreamState()
    data: list[str] = []
    async for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:  # a blank line ends an event
            if _event("\n".join(data), on_text, state):
                return _checked(state)
            data = []
        # other fields (event:, id:, retry:) and ":" comments (keep-alives) are ignored
    if data and _event("\n".join(data), on_text, state):  # last event without a blank line
        return _checked(state)
    raise MalformedResponse(f"the stream ended after {state.events} events without 'data: [DONE]'")


def _event(data: str, on_text: TextSink, state: StreamState) -> bool:
    """Apply one event's data; True at ``[DONE]``."""
    if data.strip() == DONE:
        state.done = True
        return True
    state.events += 1
    try:
        chunk = json.loads(data)
    except ValueError:
        raise MalformedResponse(f"stream event is not JSON: {data[:120]!r}") from None
    if not isinstance(chunk, dict):
        raise MalformedResponse(f"stream event is JSON {type(chunk).__name__}, not an object")
    if chunk.get("error"):
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise MalformedResponse(f"the server reported an error mid-stream: {message!r}")
    state.id = chunk.get("id") or state.id
    state.model = chunk.get("model") or state.model
    if isinstance(chunk.get("usage"), dict):
        state.usage = chunk["usage"]
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, dict) or choice.get("index", 0) != 0:
            continue
        delta = choice.get("delta") or {}
        content = delta.get("content") if isinstance(delta, dict) else None
        if content is not None and not isinstance(content, str):
            raise MalformedResponse(f"delta content is {type(content).__name__}, not a string")
        if content:
            state.parts.append(content)
            on_text(content)
        if choice.get("finish_reason"):
            state.finish_reason = str(choice["finish_reason"])
    return False


def _checked(state: StreamState) -> dict[str, Any]:
    if state.finish_reason is None:
        raise MalformedResponse(
            f"the stream reached [DONE] after {state.events} events without a finish_reason"
        )
    return state.body()
