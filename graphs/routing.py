"""Pure routing functions; their Literal destinations are the edges Studio draws."""

from __future__ import annotations

from typing import Literal

from langgraph.types import Send

from graphs.state import State, SubAgentTask


def route_after_main(state: State) -> list[Send] | Literal["collect", "finish"]:
    """Answered -> finish; else one Send per runnable call, or collect if every call failed."""
    if state["status"] != "running":
        return "finish"
    turn = state["turn"]
    sends = [
        Send(
            "sub_agent",
            SubAgentTask(
                run_id=state["run_id"],
                video=state["video"],
                question=state["question"],
                turn=turn,
                index=call["index"],
                start=call["start"],
                end=call["end"],
            ),
        )
        for call in state["calls"]
        if call["turn"] == turn and call["error"] is None
    ]
    return sends or "collect"
