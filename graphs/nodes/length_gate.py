"""The length gate: an open-ended answer too short to cover the question goes back once.

Always in the graph; it lets every answer through when switched off, for other question
kinds, for inherently short questions, and after its one retry.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from graphs.context import Context, effective
from graphs.length import too_short
from graphs.state import State
from graphs.transcript import main_calls


async def length_gate(state: State, runtime: Runtime[Context]) -> dict:
    ctx = effective(runtime.context)
    if not too_short(state, ctx):
        return {"status": state["status"]}  # an update, so `updates` streams show the gate
    return {
        "rejected_turn": len(main_calls(state)) - 1,  # the transcript puts the instruction after it
        "status": "running",
        "answer": None,
        "final_text": None,
        "final_reply": None,
    }
