"""The length gate's rule and its instruction (read by the gate and by the transcript)."""

from __future__ import annotations

from agents.scoring.length import meets_min_length
from graphs.context import Context
from graphs.state import State


def coverage_instruction(ctx: Context) -> str:
    return (
        "Your answer is too short to cover the question. Answer again, from the frames and "
        "the notes (trust the frames where they disagree), with at least "
        f"{ctx.min_answer_bullets} bullet points or {ctx.min_answer_tokens} words, "
        "inside <answer></answer>."
    )


def too_short(state: State, ctx: Context) -> bool:
    """An open-ended answer that does not cover its question, not sent back before."""
    answer = state.get("answer")
    return not (
        not ctx.length_gate
        or state.get("rejected_turn") is not None
        or state.get("kind", "open_ended") != "open_ended"
        or state.get("options")
        or answer is None
        or meets_min_length(
            answer,
            state["question"],
            min_tokens=ctx.min_answer_tokens,
            min_bullets=ctx.min_answer_bullets,
        )
    )
