"""Pure routing functions; their Literal destinations are the edges Studio draws.

They are coroutines only because LangGraph runs a plain function of a conditional edge in a
thread pool: a thread hop for each routing decision, for work of a few microseconds. A gate
that is switched off is routed around, not run as a pass-through: each superstep costs a
checkpoint and each node a task.
"""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from graphs.context import Context, effective
from graphs.state import State, SubAgentTask


async def route_after_prepare(state: State) -> list[Send] | Literal["main_agent", "finish"]:
    """Nothing to run -> finish; the scanner's pass (two-agent mode) runs before the main
    agent's first turn."""
    if state.get("refusal"):
        return "finish"
    return _sends(state) or "main_agent"


def route_after_main(defaults: Context):
    """The router after a main-agent turn, for a graph whose runs default to ``defaults``."""

    async def route_after_main(
        state: State, runtime: Runtime[Context]
    ) -> list[Send] | Literal["collect", "length_gate", "finish"]:
        """Final -> the length gate if it is on, else finish; not final -> one Send per
        runnable call, or collect if every call failed."""
        if state["status"] != "running":
            ctx = effective(runtime.context or defaults)  # a direct invoke may send no context
            return "length_gate" if ctx.length_gate else "finish"
        return _sends(state) or "collect"

    return route_after_main


def _sends(state: State) -> list[Send]:
    """One sub-agent per runnable call of the current turn of the current run."""
    run_id, turn = state["run_id"], state["turn"]
    earlier = [
        r for r in state.get("tool_results", []) if r["run_id"] == run_id and r["turn"] < turn
    ]
    return [
        Send(
            "sub_agent",
            SubAgentTask(
                run_id=run_id,
                video=state["video"],
                media=state.get("media", "video"),
                question=state["question"],
                turn=turn,
                index=call["index"],
                start=call["start"],
                end=call["end"],
                board=earlier,
            ),
        )
        for call in state["calls"]
        if call["run_id"] == run_id and call["turn"] == turn and call["error"] is None
    ]


async def route_after_length(state: State) -> Literal["main_agent", "finish"]:
    """The length gate sent the answer back (status running again) or let it through."""
    return "main_agent" if state["status"] == "running" else "finish"
