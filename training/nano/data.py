"""paravt-nano's SFT data: train-split needle videos, oracle runs of the real graph, rows.

Videos come in noise tiers (a calm background first: the curriculum), all from the train
split's seeds. Each question is run through the graph twice with the oracle model: with
parallel tools and with dispatch ``none``; both traces are kept in the graph's JSONL trace
format (``traces.jsonl``) and turned into SFT rows by ``training.sft_data``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agents import benchmark
from agents.synthetic import QAItem, SyntheticVideo
from graphs.board import Board
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.run import run_question
from graphs.traces import read_jsonl, write_jsonl
from training.nano.oracle import OracleModel, bind
from training.sft_data import trace_rows

log = logging.getLogger(__name__)

#: Background noise of each tier; videos split evenly between tiers.
NOISE_TIERS = (0.0, 0.5, 1.0)


@dataclass(frozen=True)
class Job:
    """One question to run: its video, the item, the noise tier and the dispatch mode."""

    video: SyntheticVideo
    item: QAItem
    noise: float
    dispatch: str


def benchmark_context(**changes: Any) -> Context:
    """The graph settings of the needle benchmark, with `changes`."""
    return replace(Context(**benchmark.GRAPH_SETTINGS), **changes)


def _generate(args: tuple[str, int, float]) -> None:
    benchmark.generate(args[0], args[1], noise=args[2])


def train_videos(
    root: str | Path,
    n_videos: int,
    *,
    tiers: Sequence[float] = NOISE_TIERS,
    workers: int = 2,
) -> Iterator[tuple[float, SyntheticVideo, list[QAItem]]]:
    """`n_videos` train-split videos, split evenly between the noise tiers (generated once,
    by `workers` processes)."""
    base = benchmark.SPLIT_SEEDS["train"]
    if base + n_videos > benchmark.SPLIT_SEEDS["test"]:
        raise ValueError("the train split would run into the test split's seeds")
    plan = []
    for i in range(n_videos):
        noise = tiers[i * len(tiers) // n_videos]
        folder = Path(root) / f"noise-{noise:g}"
        folder.mkdir(parents=True, exist_ok=True)
        plan.append((str(folder), base + i, noise))
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(_generate, plan, chunksize=8))
    for folder, seed, noise in plan:
        yield (noise, *benchmark.generate(folder, seed, noise=noise))


def jobs_for(videos, *, none_every: int = 3) -> list[Job]:
    """Every question with tools, and every `none_every`-th also without tools."""
    jobs = []
    for index, (noise, video, items) in enumerate(videos):
        for k, item in enumerate(items):
            jobs.append(Job(video, item, noise, "parallel"))
            if (3 * index + k) % none_every == 0:
                jobs.append(Job(video, item, noise, "none"))
    return jobs


async def run_oracle(jobs: Sequence[Job], out: Path, *, concurrency: int = 8) -> list[dict]:
    """Run every job through the graph with the oracle; traces in job order."""
    board = Board(out / "oracle-board.sqlite")
    graph = compile_graph(OracleModel(), board)
    gate = asyncio.Semaphore(concurrency)

    async def one(index: int, job: Job) -> dict:
        async with gate:
            bind(job.video, job.item)
            result = await run_question(
                graph,
                board,
                video_path=job.video.path,
                question=job.item.question,
                options=job.item.options,
                kind=job.item.kind,
                prompt=benchmark.prompt_text(job.item),
                context=benchmark_context(dispatch=job.dispatch),
                run_id=f"oracle-{index:06d}",
            )
        if result.status != "answered":
            raise RuntimeError(f"oracle run {index} ended {result.status}: {result.error}")
        return {**result.trace, "noise": job.noise}

    return list(await asyncio.gather(*(one(i, job) for i, job in enumerate(jobs))))


def build_traces(root: str | Path, n_videos: int, *, concurrency: int = 8) -> Path:
    """Generate the videos and oracle traces under `root` (reused when already there)."""
    root = Path(root)
    path = root / "traces.jsonl"
    if path.exists():
        return path
    jobs = jobs_for(list(train_videos(root / "videos", n_videos)))
    log.info("running %d oracle questions through the graph", len(jobs))
    traces = asyncio.run(run_oracle(jobs, root, concurrency=concurrency))
    write_jsonl(traces, path)
    return path


def sft_rows(traces_path: str | Path) -> list[dict]:
    """SFT rows (main-agent conversations and sub-agent notes) with each trace's noise tier."""
    rows = []
    for trace in read_jsonl(traces_path):
        if trace["status"] != "answered":
            continue
        rows += [{**row, "noise": trace["noise"]} for row in trace_rows(trace, subagents=True)]
    return rows
