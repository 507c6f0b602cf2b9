"""paravt-nano's SFT data: train-split needle videos, oracle runs of the real graph, rows.

Videos come in noise tiers (a calm background first: the curriculum), all from the train
split's seeds. Each run draws its overview frame count from :data:`OVERVIEW_FRAMES` (the
counts nFrames Gating draws in PARA-GRPO, so gating tests robustness, not an unseen input).
Per video, through the graph with the oracle model (:func:`jobs_for`):

- each benchmark question with parallel tools, and every third one also with dispatch
  ``none``, asked with the benchmark's prompt;
- two questions in other wordings (``training.nano.phrasing``), most asked as a chat asks
  (``Question: ...`` and the format line of their kind), the rest with a benchmark prompt;
- one question on a verified board (``board_mode="verified"``), its sub-agents' sighting
  notes misread at :data:`NOTE_NOISE` (``agents.misreads``), so the verifier's traces hold
  both verdicts and the main agent's traces the look again at a withheld window;
- every third video, a question in two-agent mode (a scanner's note, no tools), and every
  sixth its open question on a verified board with the length gate on.

The traces are kept in the graph's JSONL trace format (``traces.jsonl``) and turned into SFT
rows by ``training.sft_data`` (main agent and sub-agents, but never a note the noise
misread) and :func:`verifier_rows`; each row also carries what its frames show
(``frame_labels``, an auxiliary target of the vision tower) and, for a sub-agent row, the
colours its window holds (for colour-balanced sampling).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import random
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from agents import benchmark
from agents.synthetic import QAItem, SyntheticVideo, read_manifest
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from graphs.runs.traces import call_role, read_jsonl, write_jsonl
from graphs.store.sqlite_board import Board
from training.nano import phrasing, stage_records
from training.nano.oracle import OracleModel, bind
from training.nano.second_look import second_look_rows
from training.nano.verifier_rows import verifier_rows
from training.sft_data import chat_row, trace_rows

log = logging.getLogger(__name__)

#: Background noise of each tier; videos split evenly between tiers.
NOISE_TIERS = (0.0, 0.5, 1.0)
#: Overview frame counts of the oracle runs, drawn per run (seeded): the benchmark's 4 half
#: the time, and the other counts nFrames Gating draws.
OVERVIEW_FRAMES = (4, 4, 8, 16)
#: Share of sighting notes misread on a verified board's runs.
NOTE_NOISE = 0.4
#: Wordings per video beyond the benchmark's questions.
PHRASED_PER_VIDEO = 2
_LABEL = re.compile(r"<(\d+(?:\.\d+)?) seconds>\s*$")


@dataclass(frozen=True)
class Job:
    """One question to run: its video, the item, the noise tier, the dispatch mode, the
    overview frame count, whether it is asked as a chat asks (else with the benchmark's
    prompt), and the board's mode (``verified`` runs with misread notes), the scanner and
    the length gate."""

    video: SyntheticVideo
    item: QAItem
    noise: float
    dispatch: str
    overview_frames: int = benchmark.GRAPH_SETTINGS["overview_frames"]
    chat: bool = False
    board_mode: str = "isolated"
    scanner_first: bool = False
    length_gate: bool = False


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
    # Not fork: a forked child inherits PyAV's slice-thread locks without their threads, and
    # PyAV 18.1.1 frees a reformatter (and waits on those locks) in the child at the fork.
    with ProcessPoolExecutor(workers, mp_context=get_context("forkserver")) as pool:
        list(pool.map(_generate, plan, chunksize=8))
    for folder, seed, noise in plan:
        yield (noise, *benchmark.generate(folder, seed, noise=noise))


def jobs_for(
    videos, *, none_every: int = 3, frames=OVERVIEW_FRAMES, phrased: int = PHRASED_PER_VIDEO
) -> list[Job]:
    """The runs of each video (the module's list), seeded by the video: every benchmark
    question with tools and every `none_every`-th also without, `phrased` other wordings,
    one verified-board run, and the two-agent and length-gate runs of some videos. Each
    run's overview frame count is drawn from `frames`."""
    jobs = []
    for index, (noise, video, items) in enumerate(videos):
        rng = random.Random(f"jobs:{video.seed}")
        for k, item in enumerate(items):
            draw = random.Random(f"frames:{video.seed}:{k}")
            jobs.append(Job(video, item, noise, "parallel", draw.choice(frames)))
            if (3 * index + k) % none_every == 0:
                jobs.append(Job(video, item, noise, "none", draw.choice(frames)))
        asked = [phrasing.phrased(video, rng, k) for k in range(phrased)]
        for item in asked:
            chat = rng.random() < 0.8
            jobs.append(Job(video, item, noise, "parallel", rng.choice(frames), chat=chat))
        checked = rng.choice([*items, *asked])
        jobs.append(
            Job(
                video,
                checked,
                noise,
                "parallel",
                rng.choice(frames),
                chat=checked in asked,
                board_mode="verified",
            )
        )
        if index % 3 == 1:
            item = rng.choice([*items, *asked])
            jobs.append(
                Job(
                    video,
                    item,
                    noise,
                    "none",
                    rng.choice(frames),
                    chat=item in asked,
                    board_mode="shared",
                    scanner_first=True,
                )
            )
        if index % 6 == 2:
            jobs.append(
                Job(
                    video,
                    items[-1],
                    noise,
                    "parallel",
                    rng.choice(frames),
                    board_mode="verified",
                    length_gate=True,
                )
            )
    return jobs


async def run_oracle(jobs: Sequence[Job], out: Path, *, concurrency: int = 8) -> list[dict]:
    """Run every job through the graph with the oracle; traces in job order, each with the
    sub-agents whose notes the noise misread (``misread``)."""
    board = Board(out / "oracle-board.sqlite")
    graphs = {
        False: compile_graph(OracleModel(), board),
        True: compile_graph(OracleModel(noise=NOTE_NOISE), board),
    }
    gate = asyncio.Semaphore(concurrency)

    async def one(index: int, job: Job) -> dict:
        async with gate:
            truth = bind(job.video, job.item, chat=job.chat)
            context = benchmark_context(
                dispatch=job.dispatch,
                overview_frames=job.overview_frames,
                board_mode=job.board_mode,
                scanner_first=job.scanner_first,
                length_gate=job.length_gate,
                # the gate withholds at once, as when the shipped nano's traces were made:
                # a look again would change what the data stage draws after it
                verify_rereads=0,
            )
            result = await run_question(
                graphs[job.board_mode == "verified"],
                board,
                video_path=job.video.path,
                question=replace(
                    job.item.ask, prompt=None if job.chat else benchmark.prompt_text(job.item)
                ),
                context=context,
                run_id=f"oracle-{index:06d}",
            )
        if result.status != "answered":
            raise RuntimeError(f"oracle run {index} ended {result.status}: {result.error}")
        return {**result.trace, "noise": job.noise, "misread": sorted(truth.misread)}

    return list(await asyncio.gather(*(one(i, job) for i, job in enumerate(jobs))))


def build_traces(
    root: str | Path,
    n_videos: int,
    *,
    concurrency: int = 8,
    name: str = "traces.jsonl",
    make_jobs: Callable[[list], list[Job]] = jobs_for,
) -> Path:
    """Generate the videos and the oracle traces of `make_jobs`' questions about them under
    `root`, as `name`: the data stage's own, or another set beside it
    (``training.nano.off_topic``). Traces already there are reused only when they were made
    for the same questions (:func:`fingerprint`), else StaleTraces."""
    root = Path(root)
    jobs = make_jobs(list(train_videos(root / "videos", n_videos)))
    made_for = {"videos": n_videos, "jobs_sha256": fingerprint(jobs)}
    path = root / name
    record = path.with_name(path.name + ".made_for.json")
    if path.exists():
        found = stage_records.recorded(record)
        if found != made_for:
            raise StaleTraces(
                f"{path} was made for other questions than this rebuild asks "
                f"({'no record of them' if found is None else f'{found} against {made_for}'}"
                "): remove it, or give another --data or --out"
            )
        return path
    log.info("running %d oracle questions through the graph (%s)", len(jobs), name)
    traces = asyncio.run(run_oracle(jobs, root, concurrency=concurrency))
    write_jsonl(traces, path)
    stage_records.write_record(record, made_for)
    return path


class StaleTraces(RuntimeError):
    """A data folder's traces were made for other questions than this rebuild's."""


def fingerprint(jobs: Sequence[Job]) -> str:
    """sha256 of what each job asks: its video (by file name, so a copied folder matches),
    question and run settings; a changed grammar or video count changes it."""
    asked = [{**asdict(job), "video": Path(job.video.path).name} for job in jobs]
    return hashlib.sha256(json.dumps(asked, sort_keys=True, default=str).encode()).hexdigest()


def sft_rows(traces_path: str | Path, *, second_looks: float = 0.0) -> list[dict]:
    """SFT rows with each trace's noise tier, the labels of their frames
    (:func:`frame_labels`) and the colours each row's frames show: main-agent conversations,
    sub-agent notes (never one the noise misread), the verifier's calls, verifier rows
    made on the sub-agents' windows (:func:`training.nano.verifier_rows.verifier_rows`), and
    for a `second_looks` share of the sub-agent calls a row at the frames between theirs
    (:func:`training.nano.second_look.second_look_rows`), with verifier rows on it."""
    rows, needles = [], {}
    for trace in read_jsonl(traces_path):
        if trace["status"] != "answered":
            continue
        video = trace["video"]
        if video not in needles:
            needles[video] = read_manifest(Path(video).with_suffix(".json"))[0]
        truth = needles[video]
        misread = set(trace.get("misread", ()))
        made = [r for r in trace_rows(trace, subagents=True) if r["agent"] not in misread]
        made += [
            chat_row(
                [*c["messages"], {"role": "assistant", "content": c["completion"]["text"]}],
                source="trace",
                run_id=trace["run_id"],
                agent=c["agent"],
                role="verifier",
            )
            for c in trace["model_calls"]
            if call_role(c) == "verifier"
        ]
        if second_looks:
            made += second_look_rows(trace, truth, share=second_looks, misread=misread)
        made += verifier_rows(trace, [r for r in made if r["role"] == "sub_agent"], truth)
        for row in made:
            labels = frame_labels(row["messages"], truth.needles)
            colours = sorted({benchmark.COLOURS[c - 1] for c, _ in labels if c})
            rows.append(
                {**row, "noise": trace["noise"], "frame_labels": labels, "colours": colours}
            )
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
                    (
                        1 + benchmark.COLOURS.index(shown[0].color),
                        1 + benchmark.SHAPES.index(shown[0].shape),
                    )
                    if shown
                    else (0, 0)
                )
                time = None
    return labels
