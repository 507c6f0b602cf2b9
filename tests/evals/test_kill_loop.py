"""`kill -9` of a batch eval at random points, again and again: nothing lost or duplicated.

The real CLI (`app.py eval run`) as a subprocess against the scripted server, killed at
least five times at random moments of its work, then run to the end; its log and metrics
must equal those of a clean run, and no run may be left `running` on its board.
"""

from __future__ import annotations

import random

import pytest

from graphs.store.sqlite_board import Board
from testing.scripted import ScriptedServer
from tests.support.harness import (
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
from tests.support.kills import kill_at_random_points

KILLS = 5


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
