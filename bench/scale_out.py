"""Past one machine, measured: endpoint fleets, PostgreSQL board writes, per-turn overhead.

1. Eval throughput with 4 endpoints against 1 (`--endpoint` repeated, agents/client/fleet.py): the
   needle task (48 samples, a crop then an answer: 3 requests each) at concurrency 16 against
   `testing.scripted` processes of the same latency and capacity (each answers 2 requests at
   once, as a GPU server's batch is full; the rest wait). Frames are decoded by an untimed
   run first. Target: 4 endpoints at least 3.6x the samples/s of 1.
2. Board writes under 16 writer processes, SQLite file against PostgreSQL: each process
   starts a run, writes 100 notes (one transaction each) and finishes it; notes/s from the
   moment all have opened the board to the last one done.
3. The overhead a run pays per main turn (bench/run_overhead.py's measure, K = 5: the run's
   wall time minus a bare replay of its HTTP requests) with the board and checkpoints in
   PostgreSQL against SQLite. Target: at most 1.2x.

PostgreSQL is a throwaway cluster on 127.0.0.1 (tests/support/pg_cluster.py, Debian's server with
its default durability: fsync and synchronous commit on).

    python bench/scale_out.py [--runs 15]   # writes bench/scale_out.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from run_overhead import measure, responder  # noqa: E402

from graphs.runs import event_loop  # noqa: E402
from testing.scripted import role_of, scripted_process, turn_of  # noqa: E402
from tests.support.pg_cluster import start_cluster, stop_cluster  # noqa: E402

NEEDLE = {"n_videos": 16, "max_minutes": 1}
CONTEXT = {"overview_frames": 8, "crop_max_frames": 16, "max_turns": 1}
LATENCY_S, SLOTS, CONCURRENCY = 0.25, 2, 16
WRITERS, NOTES = 16, 100
reply_5 = responder(5)  # the overhead bench's scripted replies (--responder)

WRITER = """
import sys, time
from graphs.store.board import Note
from graphs.settings import Settings
from graphs.store.stores import open_board
path, url, go, tag, notes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
board = open_board(Settings(board_db=path, database_url=url or None))
print("ready", flush=True)
while not __import__("os").path.exists(go):
    time.sleep(0.001)
board.start_run(tag, video="v.mp4", question="q", settings={}, thread_id=tag)
for i in range(notes):
    board.add_note(Note(run_id=tag, key=f"t0c{i}", author="sub_agent", turn=0, call_index=i,
                        start=0.0, end=1.0, frames=[0.5], content="a red circle"))
board.finish_run(tag, status="answered", answer="A", trace={"run_id": tag})
print(time.time(), flush=True)
"""


def reply(body: dict) -> str:
    """Crop once, then answer; sub-agents describe (the eval bench's replies)."""
    if role_of(body) == "sub_agent":
        return "a coloured shape"
    if turn_of(body):
        return "\n</think>\n<answer>A</answer>"
    return (
        '\n</think>\n<tool_call>{"name": "crop_video", "arguments": '
        '{"start_time": 5, "end_time": 25}}</tool_call>'
    )


async def evaluate_over(urls: list[str], data: Path, out: Path, tag: str) -> dict:
    from evals.runner import evaluate
    from evals.spec import EvalSpec
    from evals.tasks import get_task
    from graphs.settings import Settings

    settings = Settings.load(env_file=None, endpoint=urls, model="scripted")
    spec = EvalSpec(
        task="needle", data_dir=str(data), model=f"scripted-{tag}", context=CONTEXT, options=NEEDLE
    )
    async with settings.chat_model() as llm:
        start = time.perf_counter()
        outcome = await evaluate(
            get_task("needle"), spec, llm=llm, out_root=out, concurrency=CONCURRENCY
        )
        wall = time.perf_counter() - start
    assert outcome.results["counts"]["errors"] == 0, outcome.results["errors"][:3]
    return {
        "endpoints": len(urls),
        "samples": outcome.ran,
        "wall_s": round(wall, 2),
        "samples_per_s": round(outcome.ran / wall, 2),
    }


def fleet_throughput(work: Path) -> dict:
    from agents.media import frame_store
    from evals.tasks.needle import load

    data = work / "data"
    load(data, **NEEDLE)
    frame_store.FRAME_CACHE.set_disk_dir(work / "frames")
    args = [
        "--latency",
        str(LATENCY_S),
        "--slots",
        str(SLOTS),
        "--responder",
        "bench.scale_out:reply",
    ]
    with ExitStack() as stack:
        urls = [stack.enter_context(scripted_process(*args, cwd=ROOT)) for _ in range(4)]
        event_loop.run(evaluate_over(urls, data, work / "warm", "warm"))  # decodes: untimed
        one = event_loop.run(evaluate_over(urls[:1], data, work / "out", "one"))
        four = event_loop.run(evaluate_over(urls, data, work / "out", "four"))
    return {
        "one_endpoint": one,
        "four_endpoints": four,
        "speedup": round(four["samples_per_s"] / one["samples_per_s"], 2),
        "target_speedup": 3.6,
        "latency_s": LATENCY_S,
        "slots_per_endpoint": SLOTS,
        "concurrency": CONCURRENCY,
    }


def board_writes(path: Path, url: str) -> dict:
    go = path.parent / f"go-{path.name}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), url, str(go), f"w{i}", str(NOTES)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(WRITERS)
    ]
    assert all(p.stdout.readline().strip() == "ready" for p in procs)
    began = time.time()
    go.touch()
    ends = [float(p.communicate(timeout=600)[0].split()[-1]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    wall = max(ends) - began
    return {
        "writers": WRITERS,
        "notes": WRITERS * NOTES,
        "wall_s": round(wall, 2),
        "notes_per_s": round(WRITERS * NOTES / wall, 1),
    }


def turn_overhead(url: str, runs: int) -> dict:
    with scripted_process("--responder", "bench.scale_out:reply_5", cwd=ROOT) as base_url:
        sqlite = event_loop.run(measure(base_url, 5, runs))
        postgres = event_loop.run(measure(base_url, 5, runs, url))
    key = "median_overhead_ms_per_main_turn"
    return {
        "k": 5,
        "sqlite": sqlite,
        "postgres": postgres,
        "ratio": round(postgres[key] / sqlite[key], 2),
        "target_ratio": 1.2,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per store (overhead)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="paravt-scale-out-"))
    cluster = start_cluster()
    try:
        report = {
            "eval_throughput": fleet_throughput(work),
            "board_writes": {
                "sqlite": board_writes(work / "board.sqlite", ""),
                "postgresql": board_writes(work / "pg", cluster.create_database("writes")),
            },
            "turn_overhead": turn_overhead(cluster.create_database("overhead"), args.runs),
        }
    finally:
        stop_cluster(cluster)
    writes = report["board_writes"]
    writes["postgresql_over_sqlite"] = round(
        writes["postgresql"]["notes_per_s"] / writes["sqlite"]["notes_per_s"], 2
    )
    out = Path(__file__).with_suffix(".json")
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
