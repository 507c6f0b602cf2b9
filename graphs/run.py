"""Run one question through a compiled graph; record a failed endpoint as a failed run."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from agents import video
from agents.completion import EndpointError
from graphs.board import Board
from graphs.context import Context
from graphs.traces import Trace, build_trace

log = logging.getLogger(__name__)

UpdateCallback = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class RunResult:
    run_id: str
    thread_id: str
    status: str  # answered | no_answer | failed
    answer: str | None
    final_text: str | None
    error: str | None
    trace: Trace | None


async def run_question(
    graph: CompiledStateGraph,
    board: Board,
    *,
    video_path: str,
    question: str,
    options: Sequence[str] = (),
    kind: str | None = None,
    prompt: str | None = None,
    context: Context | None = None,
    run_id: str | None = None,
    thread_id: str | None = None,
    on_update: UpdateCallback | None = None,
) -> RunResult:
    """Run (or resume, if `thread_id` has an unfinished checkpoint) one question.

    A missing or unreadable video raises `agents.video.VideoError` before anything starts.
    An endpoint that still fails after retries returns a `failed` result, with the partial
    trace stored on the board; rerunning with the same thread id resumes from the last
    checkpoint, so finished sub-agents are not asked again.
    """
    context = context or Context()
    await asyncio.to_thread(video.probe, video_path)
    run_id = run_id or uuid.uuid4().hex[:12]
    thread_id = thread_id or run_id
    config = {"configurable": {"thread_id": thread_id}}
    payload: dict[str, Any] | None = {
        "video": str(video_path),
        "question": question,
        "options": list(options),
        "run_id": run_id,
    }
    if kind:
        payload["kind"] = kind
    if prompt:
        payload["prompt"] = prompt
    if graph.checkpointer is not None:
        snapshot = await graph.aget_state(config)
        if snapshot.next:
            log.info("resuming thread %s at %s", thread_id, ", ".join(snapshot.next))
            run_id = snapshot.values.get("run_id", run_id)
            payload = None
        elif snapshot.values.get("status") not in (None, "running"):
            run_id = snapshot.values["run_id"]
            log.info("thread %s already finished as run %s", thread_id, run_id)
            return await _finished(board, run_id, thread_id)
    try:
        async for update in graph.astream(payload, config, context=context, stream_mode="updates"):
            for node, values in update.items():
                if on_update is not None and isinstance(values, dict):
                    on_update(node, values)
    except EndpointError as exc:
        log.error("run %s failed: %s", run_id, exc)
        values = (await graph.aget_state(config)).values if graph.checkpointer else {}
        trace = build_trace(
            {"run_id": run_id, **(payload or {}), **values},
            context,
            thread_id=thread_id,
            error=str(exc),
        )
        await asyncio.to_thread(
            board.finish_run, run_id, status="failed", error=str(exc), trace=trace
        )
        return RunResult(run_id, thread_id, "failed", None, None, str(exc), trace)
    return await _finished(board, run_id, thread_id)


async def _finished(board: Board, run_id: str, thread_id: str) -> RunResult:
    trace = await asyncio.to_thread(board.trace, run_id)
    if trace is None:
        raise RuntimeError(f"run {run_id} ended without reaching the finish node")
    return RunResult(
        run_id=run_id,
        thread_id=thread_id,
        status=trace["status"],
        answer=trace["answer"],
        final_text=trace["final_text"],
        error=None,
        trace=trace,
    )
