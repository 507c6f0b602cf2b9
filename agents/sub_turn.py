"""The sub-agent's and the verifier's requests: one crop window, its frames, and what to say.

Which frames a window gets follows `agents.media.sampling.window_plan` (still media included); the
words are `agents.prompts.subagent_messages` and `agents.verify.verify_messages`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents import prompts
from agents.media.sampling import window_plan
from agents.requests import ModelRequest, SamplingParams
from agents.verify import MAX_VERDICT_TOKENS, verify_messages


@dataclass(frozen=True)
class Window:
    """One validated crop_video call: where it looks, and which call of which turn it is."""

    video: str
    codec: str  # agents.media.video.VideoInfo.codec: "image" and "pages" are still media
    start: float
    end: float
    turn: int
    index: int


def window_frames(
    window: Window, *, fps: float, max_frames: int, max_pixels: int
) -> dict[str, Any]:
    """The frame reference of a window (its real times once decoded)."""
    times, region = window_plan(
        window.codec, window.start, window.end, fps=fps, max_frames=max_frames
    )
    return prompts.frames_part(window.video, times, max_pixels, region)


def subagent_request(
    window: Window,
    frames: Mapping[str, Any],
    *,
    question: str | None,
    board: Sequence[str],
    temperature: float,
    max_tokens: int,
) -> ModelRequest:
    """Describe one window factually (question-aware when given the question), after the
    earlier notes of the shared board it may read."""
    media = window.codec if window.codec in ("image", "pages") else "video"
    messages = prompts.subagent_messages(
        frames, start=window.start, end=window.end, question=question, board=board, media=media
    )
    return ModelRequest(
        role="sub_agent",
        messages=messages,
        params=SamplingParams(temperature=temperature, max_tokens=max_tokens),
        turn=window.turn,
        call_index=window.index,
        window=(window.start, window.end),
    )


def verifier_request(
    window: Window, frames: Mapping[str, Any], *, question: str, claim: str
) -> ModelRequest:
    """The verify gate's check of one note against the frames it came from."""
    return ModelRequest(
        role="verifier",
        messages=verify_messages(frames, question=question, claim=claim),
        params=SamplingParams(temperature=0.0, max_tokens=MAX_VERDICT_TOKENS),
        turn=window.turn,
        call_index=window.index,
        window=(window.start, window.end),
    )


def readable_notes(results: Sequence[Mapping[str, Any]], mode: str, max_chars: int) -> list[str]:
    """Earlier notes a sub-agent may read: none (``isolated``), all (``shared``), or only
    SUPPORTED ones (``verified``), newest last, as many of the newest as fit ``max_chars``."""
    if mode == "isolated":
        return []
    notes = [
        f"[{r['start']:.1f} - {r['end']:.1f} s] {r['content']}"
        for r in results
        if r["frames"] is None and (mode == "shared" or r["verdict"] == "SUPPORTED")
    ]
    kept: list[str] = []
    budget = max_chars
    for note in reversed(notes):
        if len(note) > budget:
            break
        kept.insert(0, note)
        budget -= len(note)
    return kept
