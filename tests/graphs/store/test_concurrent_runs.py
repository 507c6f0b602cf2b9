"""16 `app.py run` processes at once on a new home folder: no error, every note exactly once."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from collections import Counter

import pytest

from graphs.store.sqlite_board import Board
from testing.scripted import ScriptedServer
from tests.support.harness import ROOT, app_env, crop_then_answer

# app.py's own entry point, started once the barrier file appears, so that all 16 processes
# create the new board and checkpoint files at the same moment rather than as imports end.
AT_BARRIER = """
import os, sys, time
import app
while not os.path.exists(sys.argv[1]):
    time.sleep(0.0005)
sys.exit(app.main(sys.argv[2:]))
"""


@pytest.mark.slow
@pytest.mark.integration
def test_sixteen_processes_on_a_new_home_folder(tmp_path, needle_video):
    home, go = tmp_path / "new-home", tmp_path / "go"
    with ScriptedServer(crop_then_answer, latency_s=0.05) as server:
        procs = []
        for i in range(16):
            argv = ["--env-file", "", "--endpoint", server.base_url, "run"]
            argv += ["--video", needle_video.path, "--question", f"What is shown? ({i})"]
            argv += ["--thread-id", f"thread-{i}", "--max-turns", "1", "--json"]
            argv += ["--overview-frames", "4", "--crop-max-frames", "4"]
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", AT_BARRIER, str(go), *argv],
                    cwd=ROOT,
                    env=app_env(home),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        time.sleep(6.0)  # every process has imported app and polls the barrier
        go.touch()
        done = [(p.wait(timeout=240), *p.communicate()) for p in procs]
    failures = [(code, err[-600:]) for code, _, err in done if code != 0]
    assert failures == []
    assert not any("database is locked" in err or "Traceback" in err for _, _, err in done)
    records = [json.loads(out.strip().splitlines()[-1]) for _, out, _ in done]
    assert {r["status"] for r in records} == {"answered"}

    board = Board(home / "board.sqlite")
    runs = board.runs(limit=100)
    assert len(runs) == 16 and {r["status"] for r in runs} == {"answered"}
    assert {r["thread_id"] for r in runs} == {f"thread-{i}" for i in range(16)}
    for run in runs:
        keys = Counter(note.key for note in board.notes(run["run_id"]))
        assert keys == {"t0c0": 1, "t0c1": 1}, run["run_id"]
        assert board.trace(run["run_id"])["status"] == "answered"
    with sqlite3.connect(home / "checkpoints.sqlite") as conn:
        threads = conn.execute("select count(distinct thread_id) from checkpoints").fetchone()[0]
    assert threads == 16
