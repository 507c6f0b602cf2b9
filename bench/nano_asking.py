"""Ask the held-out phrasing set (``nano_phrasings``) through the graph, as a chat asks it.

Each question runs through the real graph against the model behind `llm` with the needle
benchmark's settings, sent as a chat or ``app.py run`` sends it: the question, its option
lines if any, and the kind those imply (multiple choice with options, open-ended without);
no benchmark prompt. The answer is what the graph read inside ``<answer>``, scored by
``nano_phrasings.score``.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from nano_phrasings import Phrased, held_out, score, table

from agents import benchmark
from agents.sub_turn import Window, window_frames
from evals.tasks.needle import SPLIT_SEEDS, split_folder
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from graphs.store.sqlite_board import Board
from training.nano.oracle import WINDOWS

#: The settings of bench/nano_eval.py's runs: the benchmark's, with its token caps.
CONTEXT = replace(Context(**benchmark.GRAPH_SETTINGS), max_new_tokens=256, summary_max_tokens=48)


def quarter_windows(video) -> list[tuple[Window, dict]]:
    """Each quarter of `video` (the windows the main agent asks for) with its frame reference
    under :data:`CONTEXT`."""
    step = video.duration / WINDOWS
    windows = [Window(video.path, "h264", k * step, (k + 1) * step, 0, k) for k in range(WINDOWS)]
    return [
        (
            window,
            window_frames(
                window,
                fps=CONTEXT.crop_fps,
                max_frames=CONTEXT.crop_max_frames,
                max_pixels=CONTEXT.crop_max_pixels,
            ),
        )
        for window in windows
    ]


def test_videos(data_dir: Path, n_videos: int):
    """The first `n_videos` videos of the test split (generated once under `data_dir`)."""
    folder = split_folder(data_dir, "test")
    folder.mkdir(parents=True, exist_ok=True)
    return [benchmark.generate(folder, SPLIT_SEEDS["test"] + i)[0] for i in range(n_videos)]


async def ask_all(llm, items: list[Phrased], work: Path, *, concurrency: int = 4) -> list[dict]:
    """Every item through the graph; one record per item: question, options, answer, score."""
    work.mkdir(parents=True, exist_ok=True)
    board = Board(work / "asking-board.sqlite")
    graph = compile_graph(llm, board)
    gate = asyncio.Semaphore(concurrency)

    async def one(item: Phrased) -> dict:
        async with gate:
            result = await run_question(
                graph,
                board,
                video_path=item.video,
                question=item.ask,
                context=CONTEXT,
            )
        return {
            "id": item.id,
            "kind": item.kind,
            "question": item.question,
            "options": list(item.options),
            "expected": item.letter or ", then ".join(f"{n.color} {n.shape}" for n in item.needles),
            "status": result.status,
            "answer": result.answer,
            "run_id": result.run_id,
            **score(item, result.answer),
        }

    try:
        return list(await asyncio.gather(*(one(i) for i in items)))
    finally:
        board.close()


async def phrasing_report(
    llm, data_dir: Path, work: Path, *, n_videos: int = 60, per_cell: int = 16, concurrency: int = 4
) -> dict:
    """The held-out set's table (``nano_phrasings.table``) and every answer."""
    items = held_out(test_videos(data_dir, n_videos), per_cell=per_cell)
    records = await ask_all(llm, items, work, concurrency=concurrency)
    return {**table(items, records), "answers": records}
