"""A scripted ChatModel for unit tests of graph logic (no HTTP)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.completion import Completion, EndpointError, SamplingParams, Usage


@dataclass
class Request:
    messages: list[dict[str, Any]]
    params: SamplingParams
    prefill: str | None

    @property
    def is_subagent(self) -> bool:
        return "describe video clips" in str(self.messages[0]["content"])

    @property
    def is_verifier(self) -> bool:
        return "check claims" in str(self.messages[0]["content"])

    def text(self) -> str:
        """All the text parts of the request, joined."""
        return "\n".join(
            p.get("text", "")
            for m in self.messages
            for p in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
        )

    def images(self) -> int:
        return sum(
            1
            for m in self.messages
            if isinstance(m["content"], list)
            for p in m["content"]
            if p.get("type") == "image_url"
        )


Script = Callable[[Request], "str | Exception | tuple[str, float]"]


@dataclass
class ScriptedModel:
    """Main-agent turns come from `main` in order (the last repeats); sub-agents from `sub`,
    which may return `(text, delay_s)` to finish later than its siblings; verify-gate
    checks from `verify`."""

    main: Sequence[str | Exception] = ("<think>ok</think><answer>A</answer>",)
    sub: Script = lambda request: "a red circle at 12 seconds"
    verify: Script = lambda request: "SUPPORTED"
    delay_s: float = 0.0
    requests: list[Request] = field(default_factory=list)
    _main_turns: int = 0

    async def complete(self, messages, params, *, prefill=None) -> Completion:
        request = Request(messages, params, prefill)
        self.requests.append(request)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if request.is_verifier:
            reply = self.verify(request)
        elif request.is_subagent:
            reply = self.sub(request)
            if isinstance(reply, tuple):  # (text or exception, delay)
                reply, delay = reply
                await asyncio.sleep(delay)
        else:
            reply = self.main[min(self._main_turns, len(self.main) - 1)]
            self._main_turns += 1
        if isinstance(reply, Exception):
            raise reply
        if prefill:  # scripts write whole turns; the server continues after the prefill
            reply = (
                reply.removeprefix(prefill)
                if reply.startswith(prefill)
                else reply.removeprefix("<think>")
            )
        return Completion(
            text=reply,
            finish_reason="stop",
            usage=Usage(  # like a Qwen3-VL server: 49 tokens per 224x224 image, reported
                prompt_tokens=10 * len(messages) + 49 * request.images(),
                completion_tokens=len(reply.split()),
                image_tokens=49 * request.images(),
            ),
            latency_s=self.delay_s,
            model="scripted",
            attempts=1,
        )

    @property
    def main_requests(self) -> list[Request]:
        return [r for r in self.requests if not (r.is_subagent or r.is_verifier)]

    @property
    def verify_requests(self) -> list[Request]:
        return [r for r in self.requests if r.is_verifier]

    @property
    def sub_requests(self) -> list[Request]:
        return [r for r in self.requests if r.is_subagent]


def endpoint_down() -> EndpointError:
    return EndpointError("endpoint down", base_url="http://127.0.0.1:9/v1", status=500, attempts=4)


def calls(*windows: tuple[Any, Any], think: str = "I should look closer.") -> str:
    """A main-agent turn asking for the given windows."""
    import json

    blocks = "".join(
        "<tool_call>"
        + json.dumps({"name": "crop_video", "arguments": {"start_time": s, "end_time": e}})
        + "</tool_call>"
        for s, e in windows
    )
    return f"<think>{think}</think>{blocks}"
