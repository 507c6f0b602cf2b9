"""Finish a run: store the answer and the trace on the board."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graphs.context import Context, effective
from graphs.runs.traces import end_run
from graphs.state import State
from graphs.store.board import BoardStore


def make_finish(board: BoardStore):
    async def finish(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict:
        if state.get("run_id") is None:  # refused before a run: the chat says why
            return {"status": "failed"}
        ctx = effective(runtime.context)
        thread_id = str(config.get("configurable", {}).get("thread_id", state["run_id"]))
        await end_run(
            board,
            state["run_id"],
            state,
            ctx,
            thread_id=thread_id,
            status=state["status"],
            error=state.get("refusal"),
            answer=state.get("answer"),
        )
        return {"status": state["status"]}

    return finish
