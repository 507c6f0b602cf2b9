"""`kill -9` of a batch eval at random points, again and again: nothing lost or duplicated.

The real CLI (`app.py eval run`) as a subprocess against the scripted server, killed at
least five times at random moments of its work, then run to the end; its log and metrics
must equal those of a clean run, and no run may be left `running` on its board.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from graphs.store.sqlite_board import Board
from testing.scripted import ScriptedServer
from tests.support.harness import (
    ROOT,
    Oracle,
    accounting,
    app_env,
    eval_command,
    log_lines,
    needle_options,
    needle_samples,
    results,
    run_cli,
    run_folder,
)

KILLS = 5


def _lines(log: Path) -> int:
    return log.read_bytes().count(b"\n") if log.exists() else 0


def kill_at_random_points(command, env, server, out: Path, rng: random.Random, kills: int):
    """Start the CLI, let it log 0-2 more samples, kill it after a random delay; repeat.

    The point is drawn in the run's own progress (samples logged), not in wall time alone:
    the eval keeps several samples in flight, so how long the first one takes depends on the
    machine, and a kill drawn in seconds could land before any sample on a slow one.
    """
    points = []
    while len(points) < kills:
        seen = len(server.requests)
        logged = sum(_lines(log) for log in out.glob("*/samples.jsonl"))
        process = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wanted, delay = rng.randint(0, 2), rng.uniform(0.0, 0.6)
        deadline = time.monotonic() + 120
        while process.poll() is None and (
            len(server.requests) == seen
            or sum(_lines(log) for log in out.glob("*/samples.jsonl")) < logged + wanted
        ):
            assert time.monotonic() < deadline, "the CLI made no progress"
            time.sleep(0.01)
        time.sleep(delay)
        if process.poll() is not None:
            raise AssertionError("the run finished before it could be killed: make it longer")
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        points.append((wanted, round(delay, 3)))
    return points


@pytest.mark.slow
@pytest.mark.integration
def test_kill_9_at_random_points_loses_and_duplicates_nothing(tmp_path):
    options = needle_options(5)  # 15 samples, two requests each (a crop, then the answer)
    samples = needle_samples(tmp_path / "data", options)
    env = app_env(tmp_path / "home")
    oracle = Oracle(samples, crop_first=True)
    with ScriptedServer(oracle) as fast:  # the clean reference run needs no latency
        clean = run_cli(
            eval_command(fast.base_url, tmp_path / "data", tmp_path / "clean", options), env
        )
    assert clean.returncode == 0, clean.stderr
    with ScriptedServer(oracle, latency_s=0.3) as server:
        command = eval_command(server.base_url, tmp_path / "data", tmp_path / "killed", options)
        kill_at_random_points(command, env, server, tmp_path / "killed", random.Random(14), KILLS)
        folder = run_folder(tmp_path / "killed")
        partial = accounting(folder, samples)
        assert 0 < 15 - partial["lost"] < 15, "the kills landed mid-run"
        final = run_cli(command, env)
    assert final.returncode == 0, final.stderr
    assert accounting(folder, samples) == {
        "samples": 15,
        "lost": 0,
        "duplicated": 0,
        "unparseable_lines": 0,
        "error_lines": 0,
    }
    reference = results(run_folder(tmp_path / "clean"))
    done = results(folder)
    assert done["counts"] == reference["counts"]
    assert done["metrics"] == reference["metrics"] and done["per_item"] == reference["per_item"]
    board = Board(folder / "board.sqlite")
    statuses = {run["status"] for run in board.runs(limit=1000)}
    assert "running" not in statuses and "answered" in statuses
    scored = [line["trace_id"] for line in log_lines(folder) if line["status"] == "ok"]
    assert all(board.run(trace_id)["status"] == "answered" for trace_id in scored)
