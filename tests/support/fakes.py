"""A scripted ChatModel for unit tests of graph logic (no HTTP)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.client.completion import Completion, EndpointError, Usage
from agents.requests import ModelRequest, SamplingParams


@dataclass
class Request:
    """A request the fake received: the typed request, and views tests read."""

    request: ModelRequest

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.request.messages

    @property
    def params(self) -> SamplingParams:
        return self.request.params

    @property
    def prefill(self) -> str | None:
        return self.request.prefill

    @property
    def is_subagent(self) -> bool:
        return self.request.role == "sub_agent"

    @property
    def is_verifier(self) -> bool:
        return self.request.role == "verifier"

    def wire(self) -> list[dict[str, Any]]:
        """The messages as a server would receive them (frames as data-URL images)."""
        return self.request.wire()

    def text(self) -> str:
        """All the text parts of the request as sent (frame labels included), joined."""
        return "\n".join(
            p.get("text", "")
            for m in self.wire()
            for p in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
        )

    def images(self) -> int:
        return self.request.frame_count


Script = Callable[[Request], "str | Exception | tuple[str, float]"]


@dataclass
class ScriptedModel:
    """Main-agent turns come from `main` in order (the last repeats); sub-agents from `sub`,
    which may return `(text, delay_s)` to finish later than its siblings; verify-gate
    checks from `verify`, graders from `judge`. Routes on the request's role, as every
    consumer does."""

    main: Sequence[str | Exception] = ("<think>ok</think><answer>A</answer>",)
    sub: Script = lambda request: "a red circle at 12 seconds"
    verify: Script = lambda request: "SUPPORTED"
    judge: Script = lambda request: '{"extracted_answer": "A", "correct": true}'
    delay_s: float = 0.0
    requests: list[Request] = field(default_factory=list)
    _main_turns: int = 0

    async def complete(self, model_request: ModelRequest, *, on_text=None) -> Completion:
        request = Request(model_request)
        self.requests.append(request)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if request.is_verifier:
            reply = self.verify(request)
        elif request.request.role == "judge":
            reply = self.judge(request)
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
        prefill = request.prefill
        if prefill:  # scripts write whole turns; the server continues after the prefill
            reply = (
                reply.removeprefix(prefill)
                if reply.startswith(prefill)
                else reply.removeprefix("<think>")
            )
        if on_text is not None:
            for piece in re.findall(r"\S+\s*|\s+", reply):  # streams, a word at a time
                on_text(piece)
        images = request.images()
        return Completion(
            text=reply,
            finish_reason="stop",
            usage=Usage(  # like a Qwen3-VL server: 49 tokens per 224x224 image, reported
                prompt_tokens=10 * len(request.messages) + 49 * images,
                completion_tokens=len(reply.split()),
                image_tokens=49 * images,
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
