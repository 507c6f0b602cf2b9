"""The length gate: an open-ended answer too short to cover the question goes back once.

Always in the graph; it lets every answer through when switched off, for other question
kinds, for inherently short questions, and after its one retry.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

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


async def length_gate(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context or Context()
    answer = state.get("answer")
    if (
        not ctx.length_gate
        or state.get("length_retried")
        or state.get("kind", "open_ended") != "open_ended"
        or state.get("options")
        or answer is None
        or meets_min_length(
            answer,
            state["question"],
            min_tokens=ctx.min_answer_tokens,
            min_bullets=ctx.min_answer_bullets,
        )
    ):
        return {}
    return {
        "messages": [HumanMessage(content=coverage_instruction(ctx))],
        "status": "running",
        "answer": None,
        "final_text": None,
        "final_reply": None,
        "length_retried": True,
    }
