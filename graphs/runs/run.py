"""Run one question through a compiled graph; however it ends, the board says how.

An endpoint that fails after retries ends the run `failed` (with its partial trace); a disk
that fills up ends it `failed` too, with what it computed kept in the result; any other error
ends it `failed` and is raised; a cancelled run (Ctrl-C, or a batch that stops) ends
`interrupted`. A process killed outright leaves its run `running` until the board is opened
again (`graphs.store.sqlite_board`). A thread named again resumes its own run only
(`graphs.runs.resume`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from agents.client.completion import EndpointError
from agents.question import Question
from agents.question_rules import check_question
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs import offload
from graphs.runs.resume import differences, mismatch
from graphs.runs.traces import Trace, end_run
from graphs.store import owners
from graphs.store.board import BoardStore
from graphs.store.errors import DiskFull, full_disk
from graphs.store.postgres.url import DatabaseError

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
    resumable: bool = False  # a failure that running the thread again can get past


async def run_question(
    graph: CompiledStateGraph,
    board: BoardStore,
    *,
    video_path: str,
    question: Question,
    context: Context | None = None,
    run_id: str | None = None,
    thread_id: str | None = None,
    new_thread: bool = False,
    on_update: UpdateCallback | None = None,
    source: Mapping[str, Any] | None = None,
) -> RunResult:
    """Run (or resume, if `thread_id` has an unfinished checkpoint) one question.

    A question that cannot be asked raises `agents.question_rules.QuestionRefused`, a missing
    or unreadable video `agents.media.video.VideoError`, before anything starts; so does a thread
    id whose run asked something else (`graphs.runs.resume.ThreadMismatch`), unless `new_thread`
    starts that thread over. An endpoint that still fails after retries returns a `failed`
    result, with the partial trace stored on the board; rerunning with the same thread id
    resumes from the last checkpoint, so finished sub-agents are not asked again. Without a
    checkpointer (a batch eval, a training rollout) a failed run's trace comes from the
    stream instead. `source` names where the question came from (an evaluation harness's task
    and doc id): the board's run and the trace keep it.
    """
    check_question(question.question, question.options, question.kind, prompt=question.prompt)
    context = context or Context()
    info = await offload.probe(video_path)
    # a thread named here is new: there is nothing to resume, nor a finished run to return
    may_exist = thread_id is not None or run_id is not None
    run_id = run_id or uuid.uuid4().hex[:12]
    thread_id = thread_id or run_id
    config = {"configurable": {"thread_id": thread_id}}
    payload: dict[str, Any] | None = {
        "video": str(video_path),
        "question": question.question,
        "options": list(question.options),
        "run_id": run_id,
    }
    for name in ("kind", "prompt", "system"):  # the input's optional fields
        if getattr(question, name):
            payload[name] = getattr(question, name)
    if source:
        payload["source"] = dict(source)
    if graph.checkpointer is not None and may_exist:
        if new_thread:
            await graph.checkpointer.adelete_thread(thread_id)
        snapshot = await graph.aget_state(config)
        if snapshot.values.get("run_id"):
            await _same_run(board, snapshot.values, thread_id, info.path, payload, context)
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
    computed: dict[str, Any] = {}  # what the run worked out, whatever becomes of the files
    try:
        stream = graph.astream(payload, config, context=context, stream_mode=modes)
        async for mode, chunk in stream:
            if mode == "values":
                last_values = chunk
                continue
            for node, values in chunk.items():
                if isinstance(values, dict):
                    computed.update({k: values[k] for k in _COMPUTED if values.get(k)})
                    if on_update is not None:
                        on_update(node, values)
    except asyncio.CancelledError:
        with _unless_database_lost(run_id, "interrupted"):
            board.release_run(run_id, status="interrupted", error="cancelled before it finished")
        raise
    except EndpointError as exc:
        if full_disk(exc.__context__, _file_of(board)):
            return await _disk_filled(board, run_id, thread_id, exc.__context__, computed)
        log.info("run %s failed: %s", run_id, exc)  # the result carries the message
        try:
            values = (await graph.aget_state(config)).values if graph.checkpointer else last_values
            values = {**(payload or {}), **values}
            trace = await end_run(
                board, run_id, values, context, thread_id=thread_id, status="failed", error=str(exc)
            )
        except Exception as stored:
            if not full_disk(stored, _file_of(board)):
                raise
            return await _disk_filled(board, run_id, thread_id, stored, computed)
        return RunResult(
            run_id, thread_id, "failed", None, None, None, str(exc), trace, exc.resumable
        )
    except Exception as exc:
        if full_disk(exc, _file_of(board)):
            return await _disk_filled(board, run_id, thread_id, exc, computed)
        error = f"{type(exc).__name__}: {exc}"
        with _unless_database_lost(run_id, "failed"):
            await asyncio.to_thread(board.release_run, run_id, status="failed", error=error)
        raise
    try:
        return await _finished(board, run_id, thread_id)
    except Exception as exc:
        if not full_disk(exc, _file_of(board)):
            raise
        return await _disk_filled(board, run_id, thread_id, exc, computed)


_COMPUTED = ("answer", "final_text", "final_reply")


async def _same_run(board: BoardStore, stored, thread_id, video, payload, context) -> None:
    """Refuse to resume `thread_id` for another question, video or settings."""
    run = await asyncio.to_thread(board.run, stored["run_id"])
    found = differences(
        stored,
        run["settings"] if run else None,
        video=video,
        question=payload["question"],
        options=payload["options"],
        kind=payload.get("kind"),
        prompt=payload.get("prompt"),
        context=context,
    )
    if found:
        raise mismatch(thread_id, found)


async def _disk_filled(
    board: BoardStore, run_id: str, thread_id: str, exc: BaseException, computed: dict[str, Any]
) -> RunResult:
    """The run stopped because a disk filled up: it is recorded failed if the board can still
    be written, and what it computed comes back in the result (it may be on no disk)."""
    where = getattr(exc, "path", None) or _written_file(exc) or _file_of(board) or board.where
    todo = "free some space there, then run the same command again: the thread resumes"
    if computed.get("answer"):
        todo = (
            f"the run had computed its answer, {computed['answer']!r}, which is not stored; {todo}"
        )
    error = str(DiskFull(where, todo))
    try:
        await asyncio.to_thread(board.release_run, run_id, status="failed", error=error)
    except Exception as again:
        if not full_disk(again, _file_of(board)):
            raise
        log.info("run %s could not be recorded as failed: the disk is still full", run_id)
    return RunResult(
        run_id,
        thread_id,
        "failed",
        computed.get("answer"),
        computed.get("final_text"),
        computed.get("final_reply"),
        error,
        None,
        resumable=True,
    )


def _file_of(board: BoardStore):
    """The board's file (a SQLite board; PostgreSQL's disk is the server's)."""
    return getattr(board, "path", None)


def _written_file(exc: BaseException) -> str | None:
    return getattr(exc, "filename", None)


_SHARED: weakref.WeakKeyDictionary[BoardStore, CompiledStateGraph] = weakref.WeakKeyDictionary()


def shared_graph(board: BoardStore) -> CompiledStateGraph:
    """One graph per board for runs that each bring their model (rollout engines: each run
    passes ``RunContext.of(context, its_model)``), compiled on first use, no checkpointer."""
    if board not in _SHARED:
        _SHARED[board] = compile_graph(None, board)
    return _SHARED[board]


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
