"""A model call as a typed request: who asks (its role), for which turn, call and window, with
which frames, and the messages and sampling settings to send.

The role builders (`agents.main_turn`, `agents.sub_turn`, `agents.verify`, `agents.judge`)
return requests; `ChatModel.complete` takes one. Anything that must know what a call was (a
training engine's router, a recording client, an oracle, a test fake, a scripted server via
the ``X-Paravt-Role`` header) reads ``request.role``, never the prompt text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["main", "sub_agent", "verifier", "judge"]
ROLES: tuple[Role, ...] = ("main", "sub_agent", "verifier", "judge")
FRAMES_PART = "frames"
ROLE_HEADER = "X-Paravt-Role"
"""HTTP header the OpenAI client sends with each request (and turn/call headers beside it):
real servers ignore it; the project's scripted servers route on it."""


def subagent_name(turn: int, call_index: int) -> str:
    """The trace's name for the sub-agent of call `call_index` of main turn `turn`."""
    return f"sub:{turn}:{call_index}"


@dataclass(frozen=True)
class SamplingParams:
    """Decoding settings for one chat completion."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 1024
    seed: int | None = None
    stop: tuple[str, ...] = ()
    logprobs: bool = False
    """Ask for one logprob per generated token."""
    return_token_ids: bool = False
    """Ask for prompt/completion token ids (vLLM/SGLang extension `return_token_ids`)."""


@dataclass(frozen=True)
class ModelRequest:
    """One call to the model. ``messages`` are OpenAI chat dicts whose frames are references
    (``{"type": "frames", ...}``), expanded into images only when sent (`wire`)."""

    role: Role
    messages: list[dict[str, Any]] = field(hash=False)
    params: SamplingParams = field(default_factory=SamplingParams)
    turn: int = 0
    call_index: int | None = None
    window: tuple[float, float] | None = None
    prefill: str | None = None  # text the assistant turn starts with (the Think Prefix)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"unknown role {self.role!r}; known: {', '.join(ROLES)}")

    @property
    def agent(self) -> str:
        """The trace's name for the caller: main, sub:<turn>:<call>, verify:<turn>:<call>."""
        if self.role == "sub_agent":
            return subagent_name(self.turn, self.call_index)
        if self.role == "verifier":
            return f"verify:{self.turn}:{self.call_index}"
        return self.role

    @property
    def frames(self) -> list[dict[str, Any]]:
        """Every frame reference the request carries, in order."""
        return list(frame_refs(self.messages))

    @property
    def frame_count(self) -> int:
        """How many images the request encodes."""
        return sum(len(ref["timestamps"]) for ref in self.frames)

    def headers(self) -> dict[str, str]:
        """What the client tells a server about the call, beside the body."""
        out = {ROLE_HEADER: self.role, "X-Paravt-Turn": str(self.turn)}
        if self.call_index is not None:
            out["X-Paravt-Call"] = str(self.call_index)
        return out

    def wire(self) -> list[dict[str, Any]]:
        """The messages as a server reads them: frames decoded into `<t seconds>` texts and
        JPEG data URLs (decodes video unless `ready`: call it off the event loop)."""
        kept = self.__dict__.get("_wire")
        if kept is not None:
            return list(kept)
        from agents.prompts import expand_frames  # prompts imports video; keep this light

        return expand_frames(self.messages)

    def prepare(self, *, cached_only: bool = False) -> bool:
        """Build the wire messages now and keep them, so that sending needs no decoding
        (decodes video: call it off the event loop). With ``cached_only`` nothing is decoded:
        the request is prepared only if every frame set is in memory. Returns `ready`."""
        if self.ready:
            return True
        from agents.prompts import expand_frames

        wire = expand_frames(self.messages, cached_only=cached_only)
        if wire is not None:
            self.__dict__["_wire"] = wire  # a frozen dataclass still has a __dict__
        return wire is not None

    @property
    def ready(self) -> bool:
        """Whether `wire` decodes nothing: the request has no frames, or was prepared."""
        return "_wire" in self.__dict__ or not self.frame_count


def frame_refs(messages: Iterable[Mapping[str, Any]]) -> Iterable[dict[str, Any]]:
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            yield from (dict(p) for p in content if p.get("type") == FRAMES_PART)
