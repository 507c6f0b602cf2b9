"""Run a task through the graph with bounded concurrency, resumably, one JSONL line per sample."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.client.completion import ChatModel, Completion
from agents.media import frame_store, video
from agents.media.decode_pool import decode_processes
from agents.media.sampling import overview_times
from agents.media.video import VideoError
from agents.protocols import get_protocol
from agents.question_rules import QuestionRefused
from agents.requests import ModelRequest
from agents.scoring.extract import extract_answer
from evals.costs import sample_cost, sum_costs
from evals.current_sample import CURRENT_SAMPLE
from evals.lmms_layout import write_lmms_eval_files
from evals.records import SampleLog, record_problem, sample_to_json, write_json_atomic
from evals.release_prompts import RELEASE_PROMPTS, release_prompt
from evals.results import score_records, summarize
from evals.sample import Sample
from evals.shards import Shard, write_manifest
from evals.spec import EvalSpec
from evals.tasks.base import LoadResult, Task
from graphs.builder import compile_graph
from graphs.context import Context, effective, settings_of
from graphs.runs.run import run_question
from graphs.store.sqlite_board import Board

log = logging.getLogger(__name__)

# (finished sample record, running primary score or None)
ProgressCallback = Callable[[dict[str, Any], float | None], None]


class EvalRefused(RuntimeError):
    """The data is not fit to start: the message lists what is missing or malformed."""


@dataclass(frozen=True)
class EvalOutcome:
    folder: Path
    results: dict[str, Any]
    ran: int  # samples run this time
    already_done: int  # samples skipped because an earlier run finished them


class RequestLimit:
    """A ChatModel that lets at most `limit` of its requests reach the endpoint at once.

    A request's frames are decoded before it takes a place: a place held while a video
    decodes is a request the endpoint could be serving.
    """

    def __init__(self, llm: ChatModel, limit: int) -> None:
        self.llm, self._gate = llm, asyncio.Semaphore(limit)

    async def complete(self, request: ModelRequest, **kwargs) -> Completion:
        if not request.ready:
            await asyncio.to_thread(request.prepare)
        async with self._gate:
            return await self.llm.complete(request, **kwargs)


def results_path(folder: Path, profile: str) -> Path:
    return folder / f"results_{profile}.json"


def check_protocol(task: Task, context: Context) -> None:
    """Refuse a protocol that cannot build this task's requests, before anything is loaded."""
    if context.protocol == "release-eval" and task.name not in RELEASE_PROMPTS:
        known = ", ".join(RELEASE_PROMPTS)
        raise EvalRefused(
            f"--protocol release-eval has no question text for {task.name}: the release "
            f"evaluates {known}. Use --protocol paravt for {task.name}."
        )
    refused = get_protocol(context.protocol).refusal(context, media="video", task=task.name)
    if refused:
        raise EvalRefused(refused)


def question_block(task: Task, sample: Sample, context: Context, times: list[float] | None) -> str:
    """The question block the run's protocol sends for this sample."""
    if context.protocol == "release-eval":
        return release_prompt(task.name, sample, context.prompt_mode)
    if task.render_prompt is not None and times is not None:
        return task.render_prompt(sample, times)
    return sample.prompt


def check_loaded(loaded: LoadResult, *, skip_bad_records: bool, skip_missing_media: bool) -> None:
    """Refuse to start on malformed records or missing media unless told to skip them."""
    problems = []
    if loaded.errors and not skip_bad_records:
        first = "\n  ".join(str(e) for e in loaded.errors[:5])
        problems.append(
            f"{len(loaded.errors)} malformed records, for example:\n  {first}\n"
            "Fix them, or pass --skip-bad-records to run without them."
        )
    if loaded.missing_media and not skip_missing_media:
        first = "\n  ".join(loaded.missing_media[:5])
        problems.append(
            f"{len(loaded.missing_media)} media files are missing, for example:\n"
            f"  {first}\nDownload them, or pass --skip-missing-media."
        )
    if problems:
        raise EvalRefused("\n".join(problems))


async def evaluate(
    task: Task,
    spec: EvalSpec,
    *,
    llm: ChatModel,
    out_root: str | Path,
    profile: str | None = None,
    limit: int | None = None,
    concurrency: int = 4,
    skip_bad_records: bool = False,
    skip_missing_media: bool = False,
    on_sample: ProgressCallback | None = None,
    on_start: Callable[[int, int], None] | None = None,
    shard: Shard | None = None,
) -> EvalOutcome:
    """Evaluate `task` under `spec`; rerunning the same spec resumes where it stopped.

    A sample whose endpoint failed (or whose video could not be read) is logged as an error,
    counted and listed in the results, and retried by the next run; it is never scored.
    With `shard`, only its slice of the samples runs, in its own folder (`evals.shards`).
    """
    profile = profile or task.default_profile
    task.profile(profile)  # an unknown name is a ValueError before anything runs
    context = effective(Context(**spec.context))
    check_protocol(task, context)
    loaded = await asyncio.to_thread(task.load, Path(spec.data_dir), **spec.options)
    check_loaded(loaded, skip_bad_records=skip_bad_records, skip_missing_media=skip_missing_media)
    missing = set(loaded.missing_media)
    samples = [s for s in loaded.samples if s.media not in missing][:limit]
    chosen = [(i, s) for i, s in enumerate(samples) if shard is None or shard.holds(s)]
    folder = spec.folder(out_root) if shard is None else shard.folder(spec, out_root)
    write_json_atomic(folder / "spec.json", spec.to_json())
    load = {
        "n_docs": len(loaded.samples),
        "skipped_records": [str(e) for e in loaded.errors],
        "missing_media": sorted(missing),
        "load_notes": loaded.notes,
    }
    if shard is not None:
        write_manifest(folder, shard, spec, [i for i, _ in chosen], load)
    sample_log = SampleLog(folder, check=record_problem)
    sample_log.repair()  # a torn last line (a crash mid-write) is cut off and its sample redone
    sample_log.set_aside()  # damaged or disagreeing lines: moved aside, their samples redone
    done = {sid for sid, r in sample_log.read().items() if r["status"] == "ok"}
    todo = [(i, s) for i, s in chosen if s.id not in done]
    if on_start:
        on_start(len(chosen), len(chosen) - len(todo))

    if (
        frame_store.FRAME_CACHE.disk_dir is None
    ):  # decoded frames outlive the run: reruns reuse them
        frame_store.FRAME_CACHE.set_disk_dir(Path(out_root) / ".frame_cache")
    board = Board(folder / "board.sqlite")
    # No checkpointer: a crashed sample is rerun whole, never resumed, and a failed one
    # keeps its partial trace from the stream (`graphs.runs.run`).
    graph = compile_graph(RequestLimit(llm, concurrency), board)
    # `concurrency` bounds the requests in flight at the endpoint; twice as many samples
    # are in progress, so preparing and logging some overlaps the others' requests.
    gate = asyncio.Semaphore(2 * concurrency)
    scores: list[float] = []

    async def run_one(doc_id: int, sample: Sample) -> None:
        CURRENT_SAMPLE.set(sample.id)  # this task's own context: its sample's calls only
        async with gate:
            record = await _run_sample(
                graph, board, task, sample, doc_id, context, profile, spec.votes
            )
        await asyncio.to_thread(sample_log.append, record)
        if record["status"] == "ok":
            scores.append(record["metrics"].get("score", 0.0))
        if on_sample:
            on_sample(record, sum(scores) / len(scores) if scores else None)

    # frames decode in worker processes: the loop's thread is what a batch is short of
    with decode_processes() if todo else contextlib.nullcontext():
        tasks = [asyncio.create_task(run_one(i, s)) for i, s in todo]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for pending in tasks:  # a crash stops the whole run; the next run resumes it
                pending.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            board.close()
    latest = sample_log.read()
    records = score_records(task, [latest[s.id] for _, s in chosen if s.id in latest], profile)
    results = write_results(folder, task, spec, records, profile, load)
    return EvalOutcome(folder, results, ran=len(todo), already_done=len(chosen) - len(todo))


def write_results(
    folder: Path, task: Task, spec: EvalSpec, records: list[dict], profile: str, load: dict
) -> dict[str, Any]:
    """The results JSON and lmms-eval's files of scored `records` (in document order),
    with what loading found (`load`: the split's size, skipped records, missing media)."""
    results = summarize(
        task,
        spec,
        records,
        profile,
        skipped_records=load["skipped_records"],
        missing_media=load["missing_media"],
    )
    results["load_notes"] = load["load_notes"]
    write_json_atomic(results_path(folder, profile), results)
    write_lmms_eval_files(folder, task, spec, records, results, profile, n_docs=load["n_docs"])
    return results


async def _run_sample(
    graph,
    board,
    task: Task,
    sample: Sample,
    doc_id: int,
    context: Context,
    profile: str,
    votes: int = 1,
) -> dict[str, Any]:
    """Run one sample (`votes` times, for majority voting) and score the chosen response."""
    run_id = uuid.uuid4().hex[:12]
    record: dict[str, Any] = {
        "doc_id": doc_id,
        "sample_id": sample.id,
        "target": sample.target,
        "trace_id": run_id,
        "profile": profile,
        "sample": sample_to_json(sample),
    }
    failed = {"status": "error", "resps": [], "filtered_resps": [], "metrics": {}}
    start = time.perf_counter()
    try:
        times = None
        if task.render_prompt is not None and context.protocol == "paravt":
            info = await asyncio.to_thread(video.probe, sample.media)
            times = overview_times(info.codec, info.duration, context.overview_frames)
        prompt = question_block(task, sample, context, times)
        results = await asyncio.gather(
            *(
                run_question(
                    graph,
                    board,
                    video_path=sample.media,
                    question=sample.ask(prompt),
                    context=context,
                    run_id=run_id if votes == 1 else f"{run_id}-v{k}",
                )
                for k in range(votes)
            )
        )
    except VideoError as exc:
        log.warning("sample %s: %s", sample.id, exc)
        return {**record, **failed, "error": f"media: {exc}"}
    except QuestionRefused as exc:  # a control token in a record's prompt: never sent
        log.warning("sample %s: %s", sample.id, exc)
        return {**record, **failed, "error": f"question: {exc}"}
    wall = time.perf_counter() - start
    costs = [sample_cost(r.trace, wall) for r in results if r.trace]
    cost = sum_costs(costs) if costs else None
    broken = next((r for r in results if r.status == "failed"), None)
    if broken is not None:
        return {**record, **failed, "error": f"endpoint: {broken.error}", "cost": cost}
    responses = [r.final_reply or "" for r in results]
    chosen = majority(responses)
    scored = task.score(chosen, sample, profile)
    return {
        **record,
        "status": "ok",
        "error": None,
        "resps": [chosen],
        "filtered_resps": [scored.filtered],
        "extracted": scored.extracted,
        "votes": [extract_answer(r) for r in responses] if votes > 1 else None,
        "metrics": scored.metrics,
        "run_status": results[0].status,
        "overview_timestamps": results[0].trace["overview"]["timestamps"],
        "cost": cost,
        "context": settings_of(context),
    }


def majority(responses: list[str]) -> str:
    """The first response whose extracted answer is the most common (normalised) one."""
    keys = [" ".join(extract_answer(r).lower().split()) for r in responses]
    best = max(keys, key=keys.count)
    return responses[keys.index(best)]
