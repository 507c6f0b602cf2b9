"""The trace contract: what every run leaves for training and evaluation, and its JSONL export."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypedDict

from agents.client.completion import Completion
from agents.requests import ModelRequest, subagent_name
from graphs.context import Context, settings_of
from graphs.runs.offload import board_call
from graphs.state import CallRecord, ModelCall, ToolResult
from graphs.store.board import BoardStore

TRACE_VERSION = 1


class Cost(TypedDict):
    model_calls: int
    prompt_tokens: int
    completion_tokens: int
    image_tokens: int | None  # None when the server reported none
    frames_encoded: int  # every frame in every request, counted each time it is sent
    tool_calls: int
    latency_s: float  # summed model latency (not wall time: sub-agents overlap)


class Trace(TypedDict):
    trace_version: int
    run_id: str
    thread_id: str
    video: str
    duration: float | None
    question: str
    options: list[str]
    kind: str | None
    settings: dict[str, Any]
    source: dict[str, Any]  # where the question came from (a harness's task and doc id)
    overview: dict[str, Any] | None  # frame reference: video, timestamps, max_pixels
    model_calls: list[ModelCall]
    tool_calls: list[CallRecord]
    notes: list[ToolResult]
    violations: list[list[str]]  # the parser's format violations, per main-agent turn
    turns: int
    answer: str | None
    final_text: str | None
    final_reply: str | None  # what evaluation scores (agents.scoring.reply)
    status: str
    error: str | None
    cost: Cost
    written_at: float


async def end_run(
    board: BoardStore,
    run_id: str,
    values: Mapping[str, Any],
    context: Context,
    *,
    thread_id: str,
    status: str,
    error: str | None = None,
    answer: str | None = None,
) -> Trace:
    """Store how run ``run_id`` ended, with its trace assembled from the state ``values`` it
    ended with (a failed run's last state). Every end that keeps a trace comes here: the
    finish node, a node that raised (``graphs.runs.lifecycle``) and an endpoint failure the
    CLI sees (``graphs.runs.run``)."""
    trace = build_trace({"run_id": run_id, **values}, context, thread_id=thread_id, error=error)
    await board_call(
        board, board.finish_run, run_id, status=status, answer=answer, error=error, trace=trace
    )
    return trace


def build_trace(
    values: Mapping[str, Any], context: Context, *, thread_id: str, error: str | None = None
) -> Trace:
    """The trace of the thread's current run, from graph state values (complete, or partial
    for a failed run): only that run's records (a thread's earlier questions are their own
    runs)."""
    run_id = values.get("run_id", "")

    def mine(key: str) -> list:
        return [r for r in values.get(key, []) if r.get("run_id", run_id) == run_id]

    model_calls, calls = mine("model_calls"), mine("calls")
    return Trace(
        trace_version=TRACE_VERSION,
        run_id=run_id,
        thread_id=thread_id,
        video=values.get("video", ""),
        duration=values.get("duration"),
        question=values.get("question", ""),
        options=list(values.get("options", [])),
        kind=values.get("kind"),
        settings=settings_of(context),
        source=dict(values.get("source") or {}),
        overview=values.get("overview"),
        model_calls=model_calls,
        tool_calls=calls,
        notes=mine("tool_results"),
        violations=[v["found"] for v in mine("violations")],
        turns=values.get("turn", 0),
        answer=values.get("answer"),
        final_text=values.get("final_text"),
        final_reply=values.get("final_reply"),
        status="failed" if error else values.get("status", "running"),
        error=error,
        cost=total_cost(model_calls, tool_calls=len(calls)),
        written_at=time.time(),
    )


def model_call(run_id: str, request: ModelRequest, completion: Completion) -> ModelCall:
    """The trace's record of one request and what came back (frames as references)."""
    return ModelCall(
        run_id=run_id,
        agent=request.agent,
        role=request.role,
        turn=request.turn,
        messages=request.messages,
        prefill=request.prefill,
        completion=completion.to_record(),
        frames_encoded=request.frame_count,
    )


def call_role(call: Mapping[str, Any]) -> str:
    """A traced model call's role (agents.requests.Role); traces written before roles were
    recorded name it only in ``agent`` ("main", "sub:<t>:<i>", "verify:<t>:<i>")."""
    if call.get("role"):
        return call["role"]
    agent = call.get("agent", "")
    return {"sub": "sub_agent", "verify": "verifier"}.get(agent.split(":", 1)[0], agent)


def note_windows(trace: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """Each sub-agent of a trace (by its trace name) -> the window (start, end) of its note."""
    return {subagent_name(n["turn"], n["index"]): (n["start"], n["end"]) for n in trace["notes"]}


def total_cost(model_calls: Iterable[Mapping[str, Any]], *, tool_calls: int) -> Cost:
    calls = list(model_calls)
    usages = [call["completion"]["usage"] for call in calls]
    image_tokens = [u["image_tokens"] for u in usages if u.get("image_tokens") is not None]
    return Cost(
        model_calls=len(calls),
        prompt_tokens=sum(u["prompt_tokens"] for u in usages),
        completion_tokens=sum(u["completion_tokens"] for u in usages),
        image_tokens=sum(image_tokens) if image_tokens else None,
        frames_encoded=sum(call["frames_encoded"] for call in calls),
        tool_calls=tool_calls,
        latency_s=round(sum(call["completion"]["latency_s"] for call in calls), 4),
    )


def write_jsonl(traces: Iterable[Mapping[str, Any]], path: str | Path) -> int:
    """Write traces as JSON lines atomically (a killed export leaves no half file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for trace in traces:
                out.write(json.dumps(trace, ensure_ascii=False) + "\n")
                count += 1
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


def read_jsonl(path: str | Path) -> Iterator[Trace]:
    """Read traces back; a malformed line is reported with its line number."""
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                trace = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not a JSON trace ({exc.msg})") from exc
            if trace.get("trace_version") != TRACE_VERSION:
                raise ValueError(
                    f"{path}:{number}: trace_version {trace.get('trace_version')!r}, "
                    f"expected {TRACE_VERSION}; re-export it with this version of paravt-graph"
                )
            yield trace
