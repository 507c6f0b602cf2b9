"""Run one question through a compiled graph; however it ends, the board says how.

An endpoint that fails after retries ends the run `failed` (with its partial trace); any
other error ends it `failed` and is raised; a cancelled run (Ctrl-C, or a batch that
stops) ends `interrupted`. A process killed outright leaves its run `running` until the
board is opened again (`graphs.board`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from agents.completion import EndpointError
from graphs import offload, owners
from graphs.board_base import BoardStore
from graphs.context import Context
from graphs.postgres.url import DatabaseError
from graphs.traces import Trace, build_trace

log = logging.getLogger(__name__)

UpdateCallback = Callable[[str, dict[str, Any]], None]


class RunInProgress(RuntimeError):
    """The thread's run is `running` in another live process: resuming it would run it twice."""


@dataclass(frozen=True)
class RunResult:
    run_id: str
    thread_id: str
    status: str  # answered | no_answer | failed (interrupted and other ends raise)
    answer: str | None
    final_text: str | None
    final_reply: str | None
    error: str | None
    trace: Trace | None


async def run_question(
    graph: CompiledStateGraph,
    board: BoardStore,
    *,
    video_path: str,
    question: str,
    options: Sequence[str] = (),
    kind: str | None = None,
    prompt: str | None = None,
    system: str | None = None,
    context: Context | None = None,
    run_id: str | None = None,
    thread_id: str | None = None,
    on_update: UpdateCallback | None = None,
) -> RunResult:
    """Run (or resume, if `thread_id` has an unfinished checkpoint) one question.

    A missing or unreadable video raises `agents.video.VideoError` before anything starts.
    An endpoint that still fails after retries returns a `failed` result, with the partial
    trace stored on the board; rerunning with the same thread id resumes from the last
    checkpoint, so finished sub-agents are not asked again. Without a checkpointer (a batch
    eval, a training rollout) a failed run's trace comes from the stream instead.
    """
    context = context or Context()
    await offload.probe(video_path)
    # a thread named here is new: there is nothing to resume, nor a finished run to return
    may_exist = thread_id is not None or run_id is not None
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
    if system:
        payload["system"] = system
    if graph.checkpointer is not None and may_exist:
        snapshot = await graph.aget_state(config)
        if snapshot.next:
            log.info("resuming thread %s at %s", thread_id, ", ".join(snapshot.next))
            run_id = snapshot.values.get("run_id", run_id)
            payload = None
            await asyncio.to_thread(_claim, board, run_id, thread_id)
        elif snapshot.values.get("status") not in (None, "running"):
            run_id = snapshot.values["run_id"]
            log.info("thread %s already finished as run %s", thread_id, run_id)
            return await _finished(board, run_id, thread_id)
    # Without a checkpointer the state after the last finished step comes with the stream,
    # so that a failed run's trace keeps what it did before the failure.
    modes = ["updates"] if graph.checkpointer is not None else ["updates", "values"]
    last_values: dict[str, Any] = {}
    try:
        stream = graph.astream(payload, config, context=context, stream_mode=modes)
        async for mode, chunk in stream:
            if mode == "values":
                last_values = chunk
                continue
            for node, values in chunk.items():
                if on_update is not None and isinstance(values, dict):
                    on_update(node, values)
    except asyncio.CancelledError:
        with _unless_database_lost(run_id, "interrupted"):
            board.release_run(run_id, status="interrupted", error="cancelled before it finished")
        raise
    except EndpointError as exc:
        log.error("run %s failed: %s", run_id, exc)
        values = (await graph.aget_state(config)).values if graph.checkpointer else last_values
        trace = build_trace(
            {"run_id": run_id, **(payload or {}), **values},
            context,
            thread_id=thread_id,
            error=str(exc),
        )
        await asyncio.to_thread(
            board.finish_run, run_id, status="failed", error=str(exc), trace=trace
        )
        return RunResult(run_id, thread_id, "failed", None, None, None, str(exc), trace)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        with _unless_database_lost(run_id, "failed"):
            await asyncio.to_thread(board.release_run, run_id, status="failed", error=error)
        raise
    return await _finished(board, run_id, thread_id)


@contextlib.contextmanager
def _unless_database_lost(run_id: str, status: str) -> Iterator[None]:
    """Record how a run ended unless the database is gone (then the run's owner is gone
    too, and the next process to open the board marks it interrupted)."""
    try:
        yield
    except DatabaseError as lost:
        log.info("could not record run %s as %s: %s", run_id, status, lost)


def _claim(board: BoardStore, run_id: str, thread_id: str) -> None:
    """Own a resumed run, unless another live process is running it now."""
    run = board.run(run_id)
    if run is not None and board.run_is_live(run_id):
        owner = owners.Owner.from_json(run.get("owner"))
        if owner is not None and owner != owners.current():
            raise RunInProgress(
                f"thread {thread_id} is running in process {owner.pid} on {owner.host}; "
                "wait for it to finish, or stop it, before resuming the thread"
            )
    board.claim_run(run_id)


async def _finished(board: BoardStore, run_id: str, thread_id: str) -> RunResult:
    trace = await offload.board_call(board, board.trace, run_id)
    if trace is None:
        raise RuntimeError(f"run {run_id} ended without reaching the finish node")
    return RunResult(
        run_id=run_id,
        thread_id=thread_id,
        status=trace["status"],
        answer=trace["answer"],
        final_text=trace["final_text"],
        final_reply=trace.get("final_reply"),
        error=trace.get("error"),
        trace=trace,
    )
