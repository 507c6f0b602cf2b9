"""Streamed chat completions as server-sent events, in the shape OpenAI and SGLang send them.

One ``chat.completion.chunk`` per event: the first carries ``delta.role``, then one per
content delta, then one with the ``finish_reason``; with ``stream_options.include_usage`` a
last chunk with ``choices: []`` and the usage (every other chunk then says ``usage: null``);
then ``data: [DONE]``. Both servers (`serving.server`, `testing.scripted`) use it. Standard
library only.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Mapping
from typing import Any

CONTENT_TYPE = "text/event-stream; charset=utf-8"
DONE = b"data: [DONE]\n\n"


def event(payload: Mapping[str, Any]) -> bytes:
    """One SSE event holding ``payload`` as JSON."""
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


def wants_usage(request: Mapping[str, Any]) -> bool:
    """Whether a request body asks for the usage chunk (``stream_options.include_usage``)."""
    options = request.get("stream_options")
    return isinstance(options, Mapping) and bool(options.get("include_usage"))


def words(text: str) -> list[str]:
    """``text`` cut before each word that follows whitespace; the pieces join back to it.

    >>> words("<answer>A</answer> because  it is")
    ['<answer>A</answer> ', 'because  ', 'it ', 'is']
    """
    return [piece for piece in re.split(r"(?<=\s)(?=\S)", text) if piece]


class ChunkStream:
    """The events of one streamed completion; each method returns one event's bytes."""

    def __init__(
        self,
        model: str,
        *,
        include_usage: bool = False,
        completion_id: str | None = None,
        created: int | None = None,
    ) -> None:
        self.model, self.include_usage = model, include_usage
        self.id = completion_id or f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time()) if created is None else created

    @classmethod
    def like(cls, body: Mapping[str, Any], *, include_usage: bool) -> ChunkStream:
        """The stream of a finished ``chat.completion`` body: its id, created time, model."""
        return cls(
            body["model"],
            include_usage=include_usage,
            completion_id=body["id"],
            created=body["created"],
        )

    def _chunk(self, choices: list[dict[str, Any]], usage: Any = None) -> bytes:
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }
        if self.include_usage or usage is not None:
            chunk["usage"] = usage
        return event(chunk)

    def _choice(self, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return self._chunk([choice])

    def start(self) -> bytes:
        """The first chunk: the assistant role, empty content."""
        return self._choice({"role": "assistant", "content": ""})

    def text(self, piece: str) -> bytes:
        """A content delta."""
        return self._choice({"content": piece})

    def finish(self, reason: str | None) -> bytes:
        """The chunk that ends the choice."""
        return self._choice({}, reason or "stop")

    def usage(self, usage: Mapping[str, Any]) -> bytes:
        """The usage chunk (send it only when ``include_usage``)."""
        return self._chunk([], dict(usage))

    def error(self, message: str, kind: str = "internal_error", code: int = 500) -> bytes:
        """An error that happened after the stream began (the stream then ends, no [DONE])."""
        return event({"error": {"message": message, "type": kind, "code": code}})
