"""Orchestration overhead per main-agent turn against a zero-latency OpenAI-compatible server.

Each run: prepare -> main agent (2 crop_video calls) -> 2 sub-agents -> collect -> main
agent (answer) -> finish, with the CLI's checkpointer (graphs.store.checkpointer) and board files
on disk and real HTTP to `testing.scripted` in its own process (its JSON parsing is not
counted). Frames are decoded once (warm cache), as in a long session, so what is left is
graph, checkpoint, board, prompt building and HTTP. Target: median under 20 ms per main-agent turn.

    python bench/graph_overhead.py [--runs 40]   # writes bench/graph_overhead.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from agents.client.llm import OpenAIChatModel  # noqa: E402
from agents.question import Question  # noqa: E402
from agents.synthetic import make_video  # noqa: E402
from graphs.builder import compile_graph  # noqa: E402
from graphs.context import Context  # noqa: E402
from graphs.runs.run import run_question  # noqa: E402
from graphs.store.checkpointer import open_checkpointer  # noqa: E402
from graphs.store.sqlite_board import Board  # noqa: E402
from testing.scripted import role_of, scripted_process, turn_of  # noqa: E402

CALLS = (
    '\n</think>\n<tool_call>\n{"name": "crop_video", "arguments": {"start_time": 10, '
    '"end_time": 20}}\n</tool_call>\n<tool_call>\n{"name": "crop_video", "arguments": '
    '{"start_time": 30, "end_time": 40}}\n</tool_call>'
)


def reply(body: dict) -> str:
    if role_of(body) == "sub_agent":
        return "a red circle at 12 seconds"
    if turn_of(body):
        return "\n</think>\n<answer>A</answer>"
    return CALLS


async def bench(runs: int, overview_frames: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="paravt-bench-"))
    video = make_video(work / "v.mp4", seed=1, duration=60.0)
    context = Context(overview_frames=overview_frames)
    per_turn_ms = []
    with scripted_process("--responder", "bench.graph_overhead:reply", cwd=ROOT) as base_url:
        async with (
            OpenAIChatModel(base_url) as llm,
            open_checkpointer(work / "checkpoints.sqlite") as saver,
        ):
            board = Board(work / "board.sqlite")
            graph = compile_graph(llm, board, checkpointer=saver)
            for i in range(runs + 3):
                start = time.perf_counter()
                result = await run_question(
                    graph,
                    board,
                    video_path=video.path,
                    question=Question("Colour?"),
                    context=context,
                )
                elapsed = time.perf_counter() - start
                assert result.status == "answered", result
                main_turns = sum(1 for c in result.trace["model_calls"] if c["agent"] == "main")
                if i >= 3:  # the first runs decode frames and warm caches
                    per_turn_ms.append(1000 * elapsed / main_turns)
    return {
        "overview_frames": overview_frames,
        "runs": runs,
        "main_turns_per_run": 2,
        "median_ms_per_main_turn": round(statistics.median(per_turn_ms), 2),
        "p90_ms_per_main_turn": round(statistics.quantiles(per_turn_ms, n=10)[-1], 2),
        "target_ms": 20.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    results = {
        "what": "wall time of a whole run divided by its main-agent turns; zero-latency server",
        "results": [asyncio.run(bench(args.runs, n)) for n in (8, 64)],
    }
    out = Path(__file__).with_suffix(".json")
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
