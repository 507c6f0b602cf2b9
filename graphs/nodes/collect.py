"""Collect a turn's tool results: one ToolMessage per call, in call order, and the next turn."""

from __future__ import annotations

from langgraph.runtime import Runtime

from graphs.chat_view import tool_message
from graphs.context import Context
from graphs.state import State
from graphs.transcript import of_run


async def collect(state: State, runtime: Runtime[Context]) -> dict:
    run_id, turn = state["run_id"], state["turn"]
    calls = sorted(
        (c for c in of_run(state["calls"], run_id) if c["turn"] == turn), key=lambda c: c["index"]
    )
    results = {r["index"]: r for r in of_run(state["tool_results"], run_id) if r["turn"] == turn}
    if calls and calls[0]["arguments"].get("scanner"):  # two-agent mode: the board, not a tool
        return {"turn": turn + 1}
    for call in calls:
        if call["error"] is None and call["index"] not in results:
            raise RuntimeError(f"no sub-agent result for turn {turn} call {call['index']}")
    return {
        "messages": [tool_message(call, results.get(call["index"])) for call in calls],
        "turn": turn + 1,
    }
