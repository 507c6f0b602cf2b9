"""Fan-out at K = 16, cold: how far the slowest sub-agent's return lies behind the main turn,
against the slowest single call.

One run: the main agent writes 16 crop_video calls, 16 sub-agents run, the main agent
answers; real HTTP to `testing.scripted` in its own process, where every sub-agent call
takes a fixed `--latency` and the main turn streams word by word (`--word-ms`, as a served
model writes). Frames are cold: every run gets a video file of its own and no disk cache.

    fan-out = (last sub-agent return - main turn's end) / slowest sub-agent call

Goal: 1.1 or less. Two arms side by side, in alternation: `prefetch` (windows decode as each
``</tool_call>`` streams in, graphs/runs/prefetch.py) and `at_dispatch` (WindowPrefetch disabled:
each sub-agent decodes its window when it starts, as before). The audit measured 1.15x.

    python bench/fanout.py [--runs 6]   # writes bench/fanout.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.client.llm import OpenAIChatModel  # noqa: E402
from agents.media import frame_store  # noqa: E402
from agents.question import Question  # noqa: E402
from agents.synthetic import make_video  # noqa: E402
from graphs.builder import compile_graph  # noqa: E402
from graphs.context import Context  # noqa: E402
from graphs.nodes import main_agent as main_agent_node  # noqa: E402
from graphs.runs import event_loop  # noqa: E402
from graphs.runs.prefetch import WindowPrefetch  # noqa: E402
from graphs.runs.run import run_question  # noqa: E402
from graphs.store.sqlite_board import Board  # noqa: E402
from serving.launch import endpoint_ready, free_port  # noqa: E402
from testing.scripted import Reply, role_of, turn_of  # noqa: E402

K = 16
DURATION = 320.0
WORD_S = 0.02  # the server's per-word stream delay for the main turn (overridden by the CLI)


def _calls() -> str:
    step = DURATION / K
    blocks = [
        '<tool_call>\n{"name": "crop_video", "arguments": '
        f'{{"start_time": {i * step:g}, "end_time": {(i + 1) * step:g}}}}}\n</tool_call>'
        for i in range(K)
    ]
    return "\nEach part may hold the shape.\n</think>\n" + "\n".join(blocks)


def reply(body: dict) -> Reply:
    """The scripted server's responder: calls, then an answer; sub-agents take the latency."""
    if role_of(body) == "sub_agent":
        return Reply("a red circle from 12 to 14 seconds.")
    if turn_of(body):
        return Reply("\n</think>\n<answer>A</answer>", delay_s=0.0)
    return Reply(_calls(), delay_s=0.0, chunk_delay_s=WORD_S)


class _NoPrefetch(WindowPrefetch):
    def send(self, piece: str) -> None:
        return None


class TimedModel:
    """A ChatModel that records (role, start, end) of every call."""

    def __init__(self, llm: OpenAIChatModel) -> None:
        self.llm, self.calls = llm, []

    async def complete(self, request, *, on_text=None):
        began = time.perf_counter()
        completion = await self.llm.complete(request, on_text=on_text)
        self.calls.append((request.role, request.turn, began, time.perf_counter()))
        return completion


async def one_run(base_url: str, work: Path, seed: int, prefetch: bool) -> dict:
    path = make_video(work / f"v{seed}.mp4", seed=seed, duration=DURATION).path
    main_agent_node.WindowPrefetch = WindowPrefetch if prefetch else _NoPrefetch
    context = Context(overview_frames=8, max_parallel=K, max_turns=2)
    board = Board(work / "board.sqlite")
    async with OpenAIChatModel(base_url, timeout=120) as llm:
        timed = TimedModel(llm)
        graph = compile_graph(timed, board)
        result = await run_question(
            graph, board, video_path=path, question=Question("Which shape?"), context=context
        )
    board.close()
    assert result.status == "answered", result
    first_main_end = min(end for role, turn, _, end in timed.calls if role == "main")
    subs = [(start, end) for role, _, start, end in timed.calls if role == "sub_agent"]
    assert len(subs) == K, f"{len(subs)} sub-agent calls, not {K}"
    slowest = max(end - start for start, end in subs)
    return {
        "fanout": (max(end for _, end in subs) - first_main_end) / slowest,
        "start_spread_ms": 1000 * (max(s for s, _ in subs) - min(s for s, _ in subs)),
        "slowest_call_s": slowest,
    }


def main() -> None:
    global WORD_S
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6, help="runs per arm")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per sub-agent call")
    parser.add_argument("--word-ms", type=float, default=20.0, help="main turn: ms per word")
    args = parser.parse_args()
    WORD_S = args.word_ms / 1000
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import bench.fanout as b; b.WORD_S = {WORD_S}; "
            "from testing.scripted import main; "
            f"main(['--port', '{port}', '--latency', '{args.latency}', "
            "'--responder', 'bench.fanout:reply'])",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    frame_store.FRAME_CACHE.set_disk_dir(None)
    arms: dict[str, list[dict]] = {"prefetch": [], "at_dispatch": []}
    try:
        while not endpoint_ready(base_url):
            time.sleep(0.1)
        work = Path(tempfile.mkdtemp(prefix="paravt-fanout-"))
        for run in range(args.runs):
            for offset, arm in enumerate(arms):
                seed = 2 * run + offset + 1
                run_one = one_run(base_url, work, seed, arm == "prefetch")
                arms[arm].append(event_loop.run(run_one))  # the loop app.py runs on
    finally:
        server.terminate()
        server.wait()
    report = {
        "what": __doc__.split("\n\n")[1].replace("\n", " "),
        "k": K,
        "sub_agent_latency_s": args.latency,
        "main_turn_ms_per_word": args.word_ms,
        "video": f"{DURATION:g} s synthetic, 320x240 at 8 fps, a new file per run (cold)",
        "goal_fanout": 1.1,
        "arms": {
            arm: {
                "runs": len(rows),
                "median_fanout": round(statistics.median(r["fanout"] for r in rows), 3),
                "max_fanout": round(max(r["fanout"] for r in rows), 3),
                "median_start_spread_ms": round(
                    statistics.median(r["start_spread_ms"] for r in rows), 1
                ),
            }
            for arm, rows in arms.items()
        },
    }
    Path(__file__).with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
