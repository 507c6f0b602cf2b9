"""Orchestration overhead of the `app.py run` path: wall time minus a bare replay of the same
HTTP requests, per main-agent turn, at K = 2, 5 and 16 parallel calls (64 overview frames).

Each run takes the path `app.py run` takes (graph context fitted to the served model, the
real client, a checkpoint file and a board file on disk, the graph compiled, the live
display) against `testing.scripted` in its own process with zero latency. Every request the
client sent in the run (not the warm-up's) is then replayed with a bare client of the same
HTTP library (httpx2), in the same order and the same concurrency (a turn's sub-agent calls
at once): what is left is graph, checkpoint, board, prompt building and the client. Frames
are warm (decoded by a first, untimed run), as when a session asks several questions of one
video. Run and replay share the event loop app.py runs on (`graphs.runs.event_loop`: uvloop when
installed; PARAVT_EVENT_LOOP=asyncio for asyncio's own). Target: under 20 ms per main turn
at K = 5.

    python bench/run_overhead.py [--runs 15]   # writes bench/run_overhead.json
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
from rich.console import Console  # noqa: E402

from agents.client.llm import OpenAIChatModel  # noqa: E402
from agents.client.transport import default_http_client  # noqa: E402
from agents.protocol import THINK_PREFIX  # noqa: E402
from agents.question import Question  # noqa: E402
from agents.synthetic import make_video  # noqa: E402
from cli.report import RunDisplay  # noqa: E402
from graphs.builder import compile_graph  # noqa: E402
from graphs.context import Context  # noqa: E402
from graphs.regime import served_context  # noqa: E402
from graphs.runs import event_loop  # noqa: E402
from graphs.runs.run import run_question  # noqa: E402
from graphs.settings import Settings  # noqa: E402
from graphs.store.stores import open_board, open_checkpoints  # noqa: E402
from testing.scripted import role_of, scripted_process, turn_of  # noqa: E402

KS = (2, 5, 16)
ANSWER = "\n</think>\n<answer>A</answer>"


def calls(k: int) -> str:
    step = 60.0 / k
    blocks = [
        '<tool_call>\n{"name": "crop_video", "arguments": '
        f'{{"start_time": {round(i * step, 1):g}, "end_time": {round((i + 1) * step, 1):g}}}}}'
        "\n</tool_call>"
        for i in range(k)
    ]
    return "\nI should look closer.\n</think>\n" + "\n".join(blocks)


def responder(k: int):
    def reply(body: dict) -> str:
        if role_of(body) == "sub_agent":
            return "a red circle at 12 seconds"
        return ANSWER if turn_of(body) else calls(k)

    return reply


reply_2, reply_5, reply_16 = (responder(k) for k in KS)  # the scripted server's --responder


class Recorder:
    """An event hook of the client's HTTP library keeping every request sent, in order."""

    def __init__(self) -> None:
        self.sent: list[httpx2.Request] = []

    async def __call__(self, request: httpx2.Request) -> None:
        self.sent.append(request)


async def one_run(
    base_url: str, work: Path, video: str, k: int, recorder: Recorder, database_url: str = ""
) -> tuple[int, float, float]:
    """The body of app.py's `_run`: (main-agent turns, setup seconds, run seconds). Setup
    (fitting the context to the served model, the client, the checkpoint file, compiling
    the graph) happens once per CLI invocation; the run is `run_question`. With
    ``database_url`` the board and checkpoints are in PostgreSQL (`graphs.store.stores`)."""
    began = time.perf_counter()
    args = SimpleNamespace()  # no flags given: every setting from the base context
    settings = Settings(home=work, database_url=database_url or None)
    board = open_board(settings)
    http = default_http_client(event_hooks={"request": [recorder]})  # the client's own default
    display = RunDisplay(Console(file=io.StringIO()))
    async with (
        OpenAIChatModel(base_url, http_client=http) as llm,
        open_checkpoints(settings) as saver,
    ):
        context = await served_context(args, Context(overview_frames=64, max_parallel=k), llm)
        warm = asyncio.create_task(llm.warm_up(THINK_PREFIX if context.think_prefix else None))
        graph = compile_graph(llm, board, checkpointer=saver)
        await warm
        recorder.sent.clear()  # the warm-up's model list and template probe are setup
        started = time.perf_counter()
        result = await run_question(
            graph,
            board,
            video_path=video,
            question=Question("Colour?"),
            context=context,
            on_update=display,
        )
        ran = time.perf_counter() - started
    await http.aclose()
    board.close()
    assert result.status == "answered", result
    turns = sum(1 for c in result.trace["model_calls"] if c["role"] == "main")
    return turns, started - began, ran


async def replay(sent: list[httpx2.Request]) -> float:
    """The same requests with a bare client: main turns one by one, each turn's sub-agent
    calls concurrently; returns the wall time."""
    phases: list[list[httpx2.Request]] = []
    for request in sent:
        concurrent = request.headers.get("X-Paravt-Role") == "sub_agent"
        if concurrent and phases and phases[-1][0].headers.get("X-Paravt-Role") == "sub_agent":
            phases[-1].append(request)
        else:
            phases.append([request])
    async with httpx2.AsyncClient(timeout=60) as client:
        start = time.perf_counter()
        for phase in phases:
            requests = [
                client.build_request(r.method, r.url, content=r.content, headers=r.headers)
                for r in phase
            ]
            await asyncio.gather(*(client.send(r) for r in requests))
        return time.perf_counter() - start


def bench(k: int, runs: int) -> dict:
    with scripted_process("--responder", f"bench.run_overhead:reply_{k}", cwd=ROOT) as base_url:
        return event_loop.run(measure(base_url, k, runs))  # the loop app.py runs on


async def measure(base_url: str, k: int, runs: int, database_url: str = "") -> dict:
    work = Path(tempfile.mkdtemp(prefix="paravt-overhead-"))
    video = make_video(work / "v.mp4", seed=1, duration=60.0).path
    await one_run(base_url, work, video, k, Recorder(), database_url)  # decodes: untimed
    overhead, walls, bare, setups = [], [], [], []
    for _ in range(runs):
        recorder = Recorder()
        turns, setup, ran = await one_run(base_url, work, video, k, recorder, database_url)
        replayed = await replay([r for r in recorder.sent if r.method == "POST"])
        setups.append(1000 * setup)
        walls.append(1000 * ran / turns)
        bare.append(1000 * replayed / turns)
        overhead.append(1000 * (ran - replayed) / turns)
    return {
        "k": k,
        "runs": runs,
        "event_loop": type(asyncio.get_running_loop()).__module__.split(".")[0],
        "main_turns_per_run": 2,
        "chat_requests_per_run": sum(r.method == "POST" for r in recorder.sent),
        "median_run_ms_per_main_turn": round(statistics.median(walls), 2),
        "median_replay_ms_per_main_turn": round(statistics.median(bare), 2),
        "median_overhead_ms_per_main_turn": round(statistics.median(overhead), 2),
        "p90_overhead_ms_per_main_turn": round(statistics.quantiles(overhead, n=10)[-1], 2),
        "median_setup_ms_per_invocation": round(statistics.median(setups), 2),
        "target_ms_at_k5": 20.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    results = [bench(k, args.runs) for k in KS]
    report = {
        "what": "app.py run path: run_question's wall time minus a bare replay of its chat "
        "requests, per main turn; setup (regime probe, client, checkpoint file, compile) once "
        "per invocation, apart; 64 overview frames (warm), zero-latency scripted server",
        "results": results,
    }
    out = Path(__file__).with_suffix(".json")
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
