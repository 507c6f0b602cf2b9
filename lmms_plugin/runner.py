"""Answer lmms-eval's documents with the graph: bounded concurrency, resume by document, one
board run (and trace) per document carrying lmms-eval's task and doc id.

Each finished document is a line of ``<home>/lmms_eval/<task>/samples.jsonl`` (appended and
fsynced as it finishes), keyed by its document, its copy (lmms-eval's ``repeats``) and a hash
of everything the request depends on that is known before the server is asked: the model,
the endpoint, the --model_args knobs, the task's generation settings, the prompt, the media
and the kind. A rerun returns those replies without running them, and starts no server when
every document is there. A document whose endpoint failed, or whose media could not be read,
is logged as an error, never as a reply, and runs again next time.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.client.completion import EndpointError
from agents.media import frame_store
from agents.media.decode_pool import decode_processes
from agents.media.stills import is_image_path
from agents.media.video import VideoError
from agents.protocol import PARSER_VERSION
from agents.protocols import get_protocol
from evals.records import SampleLog
from evals.runner import RequestLimit
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.regime import served_regime
from graphs.runs.run import run_question
from graphs.store.sqlite_board import Board
from lmms_plugin.docs import DocInput, TaskRefused
from lmms_plugin.generation import cut_at_stops, question_of, run_context
from lmms_plugin.model_args import PluginArgs

LOG_DIR = "lmms_eval"
KEY_VERSION = 1


@dataclass(frozen=True)
class Outcome:
    """What came of one document: its reply, or why there is none."""

    doc: DocInput
    status: str  # ok | error
    reply: str | None
    error: str | None
    run_id: str | None
    tokens: dict[str, int] | None  # input_tokens, output_tokens over the document's calls
    reused: bool = False  # read back from the resume log, not run now


def request_key(args: PluginArgs, model: str, doc: DocInput) -> str:
    """A hash of what a document's reply depends on, known before the server is asked."""
    wanted = {
        "v": KEY_VERSION,
        "parser": PARSER_VERSION,
        "model": model,
        "base_url": args.base_url or "local",
        "knobs": args.knobs,
        "kind": args.kind,
        "gen_kwargs": {
            k: doc.gen_kwargs.get(k) for k in ("max_new_tokens", "temperature", "top_p", "until")
        },
        "text": doc.text,
        "system": doc.system,
        "media": doc.media,
    }
    canonical = json.dumps(wanted, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


class ResumeLog:
    """The finished documents of each task, under ``<home>/lmms_eval/<task>/``."""

    def __init__(self, home: Path):
        self.root = Path(home) / LOG_DIR
        self._logs: dict[str, SampleLog] = {}

    def log(self, task: str) -> SampleLog:
        if task not in self._logs:
            self._logs[task] = SampleLog(self.root / _safe(task))
        return self._logs[task]

    @staticmethod
    def sample_id(doc: DocInput, key: str) -> str:
        return f"{doc.split}/{doc.doc_id}#{doc.repeat}@{key}"

    def finished(self, docs: Sequence[DocInput], keys: Sequence[str]) -> dict[int, Outcome]:
        """Position -> the logged reply, for the documents a run already answered."""
        read = {task: self.log(task).read() for task in {d.task for d in docs}}
        found = {}
        for i, (doc, key) in enumerate(zip(docs, keys, strict=True)):
            record = read[doc.task].get(self.sample_id(doc, key))
            if record and record.get("status") == "ok":
                found[i] = Outcome(
                    doc,
                    "ok",
                    record["resps"][0],
                    None,
                    record.get("trace_id"),
                    record.get("tokens"),
                    reused=True,
                )
        return found

    def append(self, outcome: Outcome, key: str, context: Context | None) -> None:
        doc = outcome.doc
        self.log(doc.task).append(
            {
                "sample_id": self.sample_id(doc, key),
                "doc_id": doc.doc_id,
                "split": doc.split,
                "repeat": doc.repeat,
                "key": key,
                "status": outcome.status,
                "resps": [outcome.reply] if outcome.status == "ok" else [],
                "error": outcome.error,
                "trace_id": outcome.run_id,
                "tokens": outcome.tokens,
                "source": doc.source,
                "context": dataclasses.asdict(context) if context else None,
                "written_at": time.time(),
            }
        )


async def answer(
    docs: Sequence[DocInput],
    *,
    args: PluginArgs,
    llm,
    endpoint: str,
    log: ResumeLog,
    keys: Sequence[str],
    on_done: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run every document through the graph against `endpoint` (`llm` its client); the
    settings of each task are fitted to the served model first, and a task its protocol
    cannot serve is refused (TaskRefused, ValueError) before any document runs."""
    try:
        regime = await served_regime(llm)
    except EndpointError:  # each document's own run reports the endpoint, in its log line
        regime = None
    contexts: dict[str, Context] = {}
    plans = []
    for doc in docs:
        gen = json.dumps(
            {k: v for k, v in doc.gen_kwargs.items() if k != "until"}, sort_keys=True, default=str
        )
        name = f"{doc.task}\0{gen}"
        if name not in contexts:
            contexts[name] = run_context(args.knobs, doc.gen_kwargs, regime, task=doc.task)
        context = contexts[name]
        refused = get_protocol(context.protocol).refusal(context, media=_media_kind(doc.media))
        if refused:
            raise TaskRefused(f"{doc.task} (doc {doc.doc_id}): {refused}")
        plans.append(
            (doc, context, question_of(doc, context.protocol, context.prompt_mode, args.kind))
        )
    if frame_store.FRAME_CACHE.disk_dir is None:  # decoded frames outlive the run
        frame_store.FRAME_CACHE.set_disk_dir(log.root / ".frame_cache")
    board = Board(args.home / "board.sqlite")
    graph = compile_graph(RequestLimit(llm, args.concurrency), board)
    gate = asyncio.Semaphore(2 * args.concurrency)  # documents in progress

    async def one(position: int) -> Outcome:
        doc, context, question = plans[position]
        async with gate:
            outcome = await _run_doc(graph, board, doc, context, question)
        await asyncio.to_thread(log.append, outcome, keys[position], context)
        if on_done:
            on_done(outcome)
        return outcome

    with decode_processes(), contextlib.closing(board):
        tasks = [asyncio.create_task(one(i)) for i in range(len(plans))]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for pending in tasks:  # a crash stops the batch; the log keeps what finished
                pending.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise


async def _run_doc(graph, board, doc: DocInput, context: Context, question) -> Outcome:
    run_id = uuid.uuid4().hex[:12]
    try:
        result = await run_question(
            graph,
            board,
            video_path=doc.media,
            question=question,
            context=context,
            run_id=run_id,
            source=doc.source,
        )
    except VideoError as exc:
        return Outcome(doc, "error", None, f"media: {exc}", None, None)
    cost = (result.trace or {}).get("cost") or {}
    tokens = {
        "input_tokens": cost.get("prompt_tokens", 0),
        "output_tokens": cost.get("completion_tokens", 0),
    }
    if result.status == "failed":
        why = f"endpoint: {result.error}" if result.error else "the run failed"
        return Outcome(doc, "error", None, f"{why} (trace {run_id})", run_id, tokens)
    reply = cut_at_stops(result.final_reply or "", doc.gen_kwargs.get("until"))
    return Outcome(doc, "ok", reply, None, run_id, tokens)


def failures_message(outcomes: Sequence[Outcome], log: ResumeLog, shown: int = 10) -> str:
    """One message for the documents that have no reply, each with its error."""
    failed = [o for o in outcomes if o.status != "ok"]
    lines = [f"{o.doc.task} doc {o.doc.doc_id}: {o.error}" for o in failed[:shown]]
    more = f"; and {len(failed) - shown} more" if len(failed) > shown else ""
    return (
        f"paravt: {len(failed)} of {len(outcomes)} documents have no reply, and none of them "
        f"is scored as an answer: {'; '.join(lines)}{more}. The {len(outcomes) - len(failed)} "
        f"answered are kept in {log.root}; run the same command again to retry only the rest."
    )


def _media_kind(path: str) -> str:
    target = Path(path)
    if target.is_dir():
        return "pages"
    return "image" if is_image_path(target) else "video"


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "task"
