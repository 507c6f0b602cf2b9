"""`kill -9` of a CLI subprocess at random points of its work, again and again."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

from tests.support.harness import ROOT


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
