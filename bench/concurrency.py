"""Concurrency on fresh and shared files: the board's first creation, and many runs at once.

1. Board race: N processes, released together by a barrier file, open one new board file
   (`graphs.store.sqlite_board.Board`); repeated over several trials. Target: 0 failures.
2. Concurrent runs: 64 `app.py run` invocations at once in one process (64 threads through
   `app.main`, each with its own board and checkpoint connections on a fresh PARAVT_HOME),
   two crop calls each, against `testing.scripted` in its own process. Target: 0 errors,
   64 answered runs, every note exactly once, 64 checkpoint threads.

    python bench/concurrency.py   # -> bench/concurrency.json
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER_ARGS = ["--latency", "0.05", "--responder", "tests.support.harness:crop_then_answer"]
sys.path.insert(0, str(ROOT))

RESULT = Path(__file__).with_suffix(".json")
BARRIER_CHILD = """
import os, sys, time
sys.path.insert(0, {root!r})
from graphs.store.sqlite_board import Board
while not os.path.exists(sys.argv[2]):
    time.sleep(0.0005)
try:
    Board(sys.argv[1]).close()
    print("ok")
except Exception as exc:
    print(f"{{type(exc).__name__}}: {{exc}}")
"""


def board_race(processes: int, trials: int, work: Path) -> dict:
    """Failures of `processes` simultaneous first opens of a new board file, per trial."""
    child = BARRIER_CHILD.format(root=str(ROOT))
    failures, messages = [], Counter()
    for trial in range(trials):
        folder = work / f"race-{processes}-{trial}"
        folder.mkdir(parents=True)
        go = folder / "go"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", child, str(folder / "board.sqlite"), str(go)],
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(processes)
        ]
        time.sleep(1.5 + processes * 0.08)  # every child has imported and is polling
        go.touch()
        outs = [p.communicate()[0].strip() for p in procs]
        bad = [o for o in outs if o != "ok"]
        failures.append(len(bad))
        messages.update(bad)
    return {
        "processes": processes,
        "trials": trials,
        "failures_per_trial": failures,
        "failed_opens": sum(failures),
        "errors": dict(messages),
    }


def concurrent_runs(n: int, work: Path, video: Path) -> dict:
    """n `app.py run`s at once in one process, each through app.main on its own thread."""
    import app
    from graphs.store.sqlite_board import Board

    home = work / f"home-{n}"
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "testing.scripted", "--port", str(port), *SERVER_ARGS],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    server.stdout.readline()  # "scripted server at ..."
    endpoint = f"http://127.0.0.1:{port}/v1"
    codes: dict[int, object] = {}

    def one(i: int) -> None:
        argv = ["--env-file", "", "--endpoint", endpoint, "--home", str(home), "run"]
        argv += ["--video", str(video), "--question", f"What is shown? ({i})", "--json"]
        argv += ["--thread-id", f"thread-{i}", "--overview-frames", "4", "--max-turns", "1"]
        try:
            codes[i] = app.main(argv)
        except BaseException as exc:  # counted, not raised: the figure is how many fail
            codes[i] = f"{type(exc).__name__}: {str(exc)[:200]}"

    began = time.perf_counter()
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    wall = time.perf_counter() - began
    server.terminate()
    server.wait()
    outcomes = Counter(str(c) for c in codes.values())
    board = Board(home / "board.sqlite")
    runs = board.runs(limit=10 * n)
    statuses = Counter(r["status"] for r in runs)
    notes = Counter(len(board.notes(r["run_id"])) for r in runs)
    board.close()
    with sqlite3.connect(home / "checkpoints.sqlite") as conn:
        threads_saved = conn.execute("select count(distinct thread_id) from checkpoints").fetchone()
    output = sink.getvalue()
    return {
        "runs": n,
        "wall_s": round(wall, 2),
        "exit_codes": dict(outcomes),
        "errors": sum(v for k, v in outcomes.items() if k != "0"),
        "database_is_locked_in_output": output.count("database is locked"),
        "board_statuses": dict(statuses),
        "runs_by_note_count": {str(k): v for k, v in sorted(notes.items())},
        "checkpoint_threads": threads_saved[0],
    }


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--runs", type=int, default=64)
    parser.add_argument("--json", type=Path, default=RESULT)
    args = parser.parse_args()
    from agents.synthetic import make_video

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    work = Path(tempfile.mkdtemp(prefix="paravt-concurrency-"))
    video = make_video(work / "v.mp4", seed=3, duration=60.0, fps=4.0, width=160, height=120)
    report = {
        "board_race": [board_race(p, args.trials, work) for p in (16, 64)],
        "concurrent_runs": concurrent_runs(args.runs, work, Path(video.path)),
        "cpus": os.cpu_count(),
    }
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
