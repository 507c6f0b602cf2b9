"""`kill -9` of a batch eval, again and again, then a run to the end: is anything lost?

The long version of tests/evals/test_kill_loop.py: 180 needle samples (a crop, two sub-agents and
an answer each) through `app.py eval run` against the scripted server, killed `--kills`
times at random moments after it starts sending requests; every third kill also tears the
last line of samples.jsonl, as a crash mid-write would. Then one run to the end, compared
with a clean run. Targets: 0 lost, 0 duplicated, metrics equal, no run left `running`.

    python bench/crash_resume.py   # -> bench/crash_resume.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULT = Path(__file__).with_suffix(".json")


def tear_tail(log: Path) -> bool:
    """Cut the log inside its last line; False when there is no line to cut."""
    data = log.read_bytes() if log.exists() else b""
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    if len(data) - start < 10:
        return False
    log.write_bytes(data[: start + (len(data) - start) // 2])
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=60, help="3 samples each")
    parser.add_argument("--kills", type=int, default=12)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=RESULT)
    args = parser.parse_args()
    from graphs.store.sqlite_board import Board
    from testing.scripted import ScriptedServer
    from tests.support.harness import (
        Oracle,
        accounting,
        app_env,
        eval_command,
        needle_options,
        needle_samples,
        results,
        run_cli,
        run_folder,
    )

    work = Path(tempfile.mkdtemp(prefix="paravt-crash-"))
    options = needle_options(args.videos)
    samples = needle_samples(work / "data", options)
    oracle = Oracle(samples, crop_first=True)
    env = app_env(work / "home")
    rng = random.Random(args.seed)
    with ScriptedServer(oracle) as fast:
        data = work / "data"
        clean_cmd = eval_command(fast.base_url, data, work / "clean", options, concurrency=8)
        clean = run_cli(clean_cmd, env, timeout=1800)
    if clean.returncode != 0:
        raise SystemExit(f"the clean run failed:\n{clean.stderr[-2000:]}")
    kills, torn, progress = [], 0, []
    began = time.perf_counter()
    with ScriptedServer(oracle, latency_s=args.latency) as server:
        command = eval_command(
            server.base_url, work / "data", work / "killed", options, concurrency=args.concurrency
        )
        while len(kills) < args.kills:
            seen = len(server.requests)
            process = subprocess.Popen(
                command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            while len(server.requests) == seen and process.poll() is None:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 4.0))
            if process.poll() is not None:
                break  # it finished first: fewer kills than asked, reported
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            kills.append(len(server.requests) - seen)
            folder = run_folder(work / "killed")
            if len(kills) % 3 == 0:
                torn += tear_tail(folder / "samples.jsonl")
            progress.append(len(samples) - accounting(folder, samples)["lost"])
        final = run_cli(command, env, timeout=1800)
    if final.returncode != 0:
        raise SystemExit(f"the final run failed:\n{final.stderr[-2000:]}")
    folder = run_folder(work / "killed")
    reference, done = results(run_folder(work / "clean")), results(folder)
    statuses = Counter(r["status"] for r in Board(folder / "board.sqlite").runs(limit=10**6))
    report = {
        "samples": len(samples),
        "kills": len(kills),
        "requests_between_kills": kills,
        "samples_done_after_each_kill": progress,
        "torn_tails": torn,
        "accounting": accounting(folder, samples),
        "metrics_equal_clean_run": done["metrics"] == reference["metrics"]
        and done["per_item"] == reference["per_item"],
        "metrics": done["metrics"],
        "board_run_statuses": dict(statuses),
        "runs_left_running": statuses.get("running", 0),
        "wall_s": round(time.perf_counter() - began, 1),
    }
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
