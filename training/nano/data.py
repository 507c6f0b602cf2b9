"""paravt-nano's SFT data: train-split needle videos, oracle runs of the real graph, rows.

Videos come in noise tiers (a calm background first: the curriculum), all from the train
split's seeds. Each question is run through the graph with the oracle model with parallel
tools, and every third one also with dispatch ``none``; each run draws its overview frame
count from :data:`OVERVIEW_FRAMES` (the counts nFrames Gating draws in PARA-GRPO, so gating
tests robustness, not an unseen input). The traces are kept in the graph's JSONL trace
format (``traces.jsonl``) and turned into SFT rows by ``training.sft_data``; each row also
carries what its frames show (``frame_labels``, an auxiliary target of the vision tower)
and, for a sub-agent row, the colours its window holds (for colour-balanced sampling).
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agents import benchmark
from agents.synthetic import QAItem, SyntheticVideo, read_manifest
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from graphs.runs.traces import read_jsonl, write_jsonl
from graphs.store.sqlite_board import Board
from training.nano.oracle import OracleModel, bind
from training.sft_data import trace_rows

log = logging.getLogger(__name__)

#: Background noise of each tier; videos split evenly between tiers.
NOISE_TIERS = (0.0, 0.5, 1.0)
#: Overview frame counts of the oracle runs, drawn per run (seeded): the benchmark's 4 half
#: the time, and the other counts nFrames Gating draws.
OVERVIEW_FRAMES = (4, 4, 8, 16)
_LABEL = re.compile(r"<(\d+(?:\.\d+)?) seconds>\s*$")


@dataclass(frozen=True)
class Job:
    """One question to run: its video, the item, the noise tier, the dispatch mode and the
    overview frame count."""

    video: SyntheticVideo
    item: QAItem
    noise: float
    dispatch: str
    overview_frames: int = benchmark.GRAPH_SETTINGS["overview_frames"]


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


def jobs_for(videos, *, none_every: int = 3, frames=OVERVIEW_FRAMES) -> list[Job]:
    """Every question with tools, and every `none_every`-th also without tools; each run's
    overview frame count drawn from `frames`, seeded by the video and the question."""
    jobs = []
    for index, (noise, video, items) in enumerate(videos):
        for k, item in enumerate(items):
            draw = random.Random(f"frames:{video.seed}:{k}")
            jobs.append(Job(video, item, noise, "parallel", draw.choice(frames)))
            if (3 * index + k) % none_every == 0:
                jobs.append(Job(video, item, noise, "none", draw.choice(frames)))
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
                context=benchmark_context(
                    dispatch=job.dispatch, overview_frames=job.overview_frames
                ),
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
    """SFT rows (main-agent conversations and sub-agent notes) with each trace's noise tier,
    the labels of their frames (:func:`frame_labels`) and the colours each row's frames show."""
    rows, needles = [], {}
    for trace in read_jsonl(traces_path):
        if trace["status"] != "answered":
            continue
        video = trace["video"]
        if video not in needles:
            needles[video] = read_manifest(Path(video).with_suffix(".json"))[0].needles
        for row in trace_rows(trace, subagents=True):
            labels = frame_labels(row["messages"], needles[video])
            colours = sorted({benchmark.COLOURS[c - 1] for c, _ in labels if c})
            rows.append({**row, "noise": trace["noise"], "frame_labels": labels,
                         "colours": colours})  # fmt: skip
    return rows


def frame_labels(messages, needles) -> list[tuple[int, int]]:
    """(colour, shape) of each image of a row, in order: 1 + the index in the benchmark's
    vocabulary of the needle it shows, 0 for none. A frame's time is its ``<t seconds>``
    label, which ends the text part just before it."""
    labels, time = [], None
    for message in messages:
        for part in message["content"]:
            if part["type"] == "text":
                match = _LABEL.search(part["text"])
                time = float(match.group(1)) if match else None
            elif part["type"] == "image":
                if time is None:
                    raise ValueError("an image without a <t seconds> label before it")
                shown = benchmark.visible_at(needles, time)
                labels.append(
                    (1 + benchmark.COLOURS.index(shown[0].color),
                     1 + benchmark.SHAPES.index(shown[0].shape)) if shown else (0, 0)
                )  # fmt: skip
                time = None
    return labels
