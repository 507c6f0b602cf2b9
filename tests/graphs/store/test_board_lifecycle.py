"""A run's life on the board: race-free creation, owners, stale runs marked interrupted."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphs.store import owners
from graphs.store.sqlite_board import SCHEMA_VERSION, Board

ROOT = Path(__file__).resolve().parents[3]
# A child that, in each round, opens that round's new board file as soon as the round's
# barrier file appears, and prints how each open went.
OPEN_AT_BARRIERS = """
import os, sys, time
from graphs.store.sqlite_board import Board
folder, rounds = sys.argv[1], int(sys.argv[2])
for k in range(rounds):
    while not os.path.exists(os.path.join(folder, f"go-{k}")):
        time.sleep(0.0005)
    try:
        Board(os.path.join(folder, f"round-{k}", "board.sqlite")).close()
        print("ok")
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}")
"""
# A child that starts a run, says so, then waits to be killed.
START_AND_WAIT = """
import sys, time
from graphs.store.sqlite_board import Board
board = Board(sys.argv[1])
board.start_run(sys.argv[2], video="v.mp4", question="q", settings={}, thread_id="t")
print("started", flush=True)
time.sleep(600)
"""


def child(code: str, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], cwd=ROOT, stdout=subprocess.PIPE, text=True, **kw
    )


def start(board: Board, run_id: str) -> None:
    board.start_run(run_id, video="v.mp4", question="q", settings={}, thread_id=run_id)


@pytest.mark.slow
def test_sixteen_processes_create_a_new_board_at_once_without_an_error(tmp_path):
    rounds = 8  # each round races on a new file; before the fix, about half the rounds failed
    procs = [child(OPEN_AT_BARRIERS, str(tmp_path), str(rounds)) for _ in range(16)]
    time.sleep(3.0)  # every child has imported and polls the first barrier
    for k in range(rounds):
        (tmp_path / f"go-{k}").touch()
        time.sleep(0.4)
    outcomes = [p.communicate(timeout=120)[0].split() for p in procs]
    assert [line for lines in outcomes for line in lines] == ["ok"] * 16 * rounds
    for k in range(rounds):
        with sqlite3.connect(tmp_path / f"round-{k}" / "board.sqlite") as conn:
            assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"
            query = "select value from meta where key = 'schema_version'"
            assert conn.execute(query).fetchone() == (str(SCHEMA_VERSION),)


def test_a_run_of_a_killed_process_is_interrupted_when_the_board_is_opened_again(tmp_path):
    path = tmp_path / "board.sqlite"
    dead = child(START_AND_WAIT, str(path), "dead-run")
    live = child(START_AND_WAIT, str(path), "live-run")
    try:
        assert dead.stdout.readline().strip() == "started"
        assert live.stdout.readline().strip() == "started"
        dead.kill()
        dead.wait()
        board = Board(path)
        assert board.run("dead-run")["status"] == "interrupted"
        assert f"pid {dead.pid}" in board.run("dead-run")["error"]
        assert board.run("live-run")["status"] == "running", "a live owner's run is left alone"
        assert board.run_is_live("live-run") and not board.run_is_live("dead-run")
    finally:
        live.kill()
        live.wait()
    assert Board(path).run("live-run")["status"] == "interrupted"


def test_a_reused_pid_does_not_keep_a_dead_run_alive(board):
    start(board, "r1")
    me = owners.current()
    reused = owners.Owner(me.host, me.boot, me.pid, started="1")  # same pid, another start
    board._db.execute("update runs set owner = ? where run_id = 'r1'", [reused.to_json()])
    assert owners.is_alive(reused) is False
    assert board.mark_stale_interrupted() == ["r1"]
    assert board.run("r1")["status"] == "interrupted"


def test_runs_of_another_host_are_left_alone(board):
    start(board, "r1")
    elsewhere = owners.Owner("another-host", "", 1, "")
    board._db.execute("update runs set owner = ? where run_id = 'r1'", [elsewhere.to_json()])
    assert board.mark_stale_interrupted() == []
    assert board.run("r1")["status"] == "running"


def test_this_process_owns_its_runs_and_a_resumed_run_is_claimed_again(board):
    start(board, "r1")
    run = board.run("r1")
    assert json.loads(run["owner"])["pid"] == os.getpid()
    assert Board(board.path).run("r1")["status"] == "running", "opening again keeps live runs"
    assert board.release_run("r1", status="interrupted", error="cancelled")
    assert not board.release_run("r1", error="twice"), "only a running run is released"
    assert board.run("r1")["status"] == "interrupted" and board.run("r1")["finished_at"]
    assert board.claim_run("r1") and board.run("r1")["status"] == "running"
    assert board.run("r1")["error"] is None and board.run("r1")["finished_at"] is None
    assert not board.claim_run("no-such-run")
    board.finish_run("r1", status="answered", answer="A")
    assert not board.release_run("r1", error="late"), "a finished run stays finished"
    with pytest.raises(ValueError, match="final run status"):
        board.release_run("r1", status="running", error="x")


def test_a_version_1_board_is_migrated_and_its_running_runs_interrupted(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the schema of version 1: runs had no owner
        conn.execute(
            "create table runs (run_id text primary key, thread_id text, video text, "
            "question text, settings text, status text, answer text, error text, "
            "started_at float, finished_at float)"
        )
        conn.execute(
            "insert into runs values ('old', 't', 'v', 'q', '{}', 'running', null, null, 1.0, null)"
        )
        conn.execute(
            "insert into runs values ('done', 't', 'v', 'q', '{}', 'answered', 'A', null, 1.0, 2.0)"
        )
    board = Board(path)
    assert board.run("old")["status"] == "interrupted"
    assert board.run("done")["status"] == "answered"
    start(board, "new")
    assert board.run("new")["owner"]


def test_a_version_2_board_gains_the_source_column(tmp_path):
    path = tmp_path / "v2.sqlite"
    with sqlite3.connect(path) as conn:  # the schema of version 2: runs had no source
        conn.execute(
            "create table runs (run_id text primary key, thread_id text, video text, "
            "question text, settings text, status text, answer text, error text, "
            "started_at float, finished_at float, owner text)"
        )
        conn.execute(
            "insert into runs values ('old', 't', 'v', 'q', '{}', 'answered', "
            "'A', null, 1.0, 2.0, null)"
        )
    board = Board(path)
    assert board.run("old")["source"] == {} and board.run("old")["status"] == "answered"
    board.start_run(
        "new",
        video="v",
        question="q",
        settings={},
        thread_id="t",
        source={"task": "videomme", "doc_id": 3},
    )
    assert board.run("new")["source"] == {"task": "videomme", "doc_id": 3}
