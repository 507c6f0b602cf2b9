"""The main agent's request: its whole transcript rendered from raw data, as the model reads it.

The graph keeps a run as raw data (the question, the overview frames, each turn the model
wrote, each call's reply); this module renders it into the Qwen/Hermes text protocol:
a system prompt, the overview frames and the question, then the model's turns and the tool
responses (``<tool_response>`` blocks, one per call, in call order), and the Answer Suffix
on the turn that must answer. SFT export, evaluation and rollouts build the same request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agents import prompts
from agents.question import Question
from agents.requests import ModelRequest, SamplingParams
from agents.verify import withheld


@dataclass(frozen=True)
class Reply:
    """What came back for one call."""

    start: float | None = None
    end: float | None = None
    note: str | None = None  # a sub-agent's summary
    frames: Mapping[str, Any] | None = field(default=None, hash=False)  # frames protocol
    error: str | None = None  # a refused or invalid call: the message for the model
    verdict: str | None = None  # the verify gate's verdict (None when the gate is off)


@dataclass(frozen=True)
class Step:
    """One item of the transcript after the first user turn."""

    kind: Literal["turn", "replies", "note"]
    text: str = ""  # turn: the model's whole turn (prefill included); note: a user message
    replies: tuple[Reply, ...] = ()  # replies: one per call of the turn before, in call order
    last_turn: bool = False  # replies: the next turn must answer (the Answer Suffix follows)
    parts: bool = True  # note: sent as a list of text parts (else as a plain string)


@dataclass(frozen=True)
class Setting:
    """What the main agent is told about its tools and its media."""

    calls_per_turn: int  # crop_video calls served per turn (0: no tools)
    media: str = "video"  # agents.media.video.VideoInfo.codec: "image" and "pages" are still media
    answer_now: bool = False  # no tool turns at all: the first turn must answer

    @classmethod
    def of(cls, ctx: Any, media: str) -> Setting:
        """The setting of a run (``ctx``: its graphs.context.Context)."""
        calls_per_turn = ctx.calls_per_turn
        return cls(calls_per_turn, media, answer_now=calls_per_turn == 0 or ctx.max_turns == 0)


def first_user_content(
    ask: Question, overview: Mapping[str, Any], *, duration: float | None, answer_now: bool
) -> list[dict[str, Any]]:
    content = prompts.main_user_content(
        ask.question,
        overview,
        options=ask.options,
        kind=ask.kind,
        duration=duration,
        prompt=ask.prompt,
    )
    if answer_now:
        content.append(prompts.text_part("\n" + prompts.forced_answer_text(ask.kind)))
    return content


def replies_content(replies: Sequence[Reply], *, kind, last_turn: bool) -> list[dict[str, Any]]:
    """The tool responses of one turn, in call order, as one user message."""
    parts = []
    for position, reply in enumerate(replies):
        parts.append(prompts.text_part(("\n" if position else "") + "<tool_response>\n"))
        if reply.error is not None:
            parts.append(prompts.text_part(reply.error))
        elif withheld(reply.verdict):
            parts.append(
                prompts.text_part(
                    f"No verified finding for {reply.start:.1f} - {reply.end:.1f} seconds "
                    f"(the check judged the note {reply.verdict})."
                )
            )
        elif reply.frames is not None:
            parts.append(prompts.text_part(f"Window {reply.start:.1f} - {reply.end:.1f} seconds:"))
            parts.append(dict(reply.frames))
        else:
            parts.append(prompts.text_part(reply.note or ""))
        parts.append(prompts.text_part("\n</tool_response>"))
    if last_turn:
        parts.append(prompts.text_part("\n" + prompts.forced_answer_text(kind)))
    return prompts.merge_text_parts(parts)


def main_messages(
    ask: Question,
    overview: Mapping[str, Any],
    *,
    duration: float | None,
    setting: Setting,
    steps: Sequence[Step] = (),
) -> list[dict[str, Any]]:
    """The main agent's transcript as OpenAI chat dicts (frames as references)."""
    system = prompts.main_system_prompt(setting.calls_per_turn, setting.media)
    first = first_user_content(ask, overview, duration=duration, answer_now=setting.answer_now)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": first},
    ]
    for step in steps:
        if step.kind == "turn":
            messages.append({"role": "assistant", "content": step.text})
        elif step.kind == "replies":
            content = replies_content(step.replies, kind=ask.kind, last_turn=step.last_turn)
            messages.append({"role": "user", "content": content})
        else:
            text = [prompts.text_part(step.text)] if step.parts else step.text
            messages.append({"role": "user", "content": text})
    return messages


def main_request(
    ask: Question,
    overview: Mapping[str, Any],
    *,
    duration: float | None,
    setting: Setting,
    steps: Sequence[Step] = (),
    turn: int = 0,
    params: SamplingParams | None = None,
    prefill: str | None = None,
) -> ModelRequest:
    """The request for the main agent's next turn."""
    messages = main_messages(ask, overview, duration=duration, setting=setting, steps=steps)
    return ModelRequest(
        role="main",
        messages=messages,
        params=params or SamplingParams(),
        turn=turn,
        prefill=prefill,
    )
