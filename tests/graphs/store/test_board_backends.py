"""Every board guarantee on both stores: the SQLite file and PostgreSQL (graphs.store.board)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from graphs.store import owners
from graphs.store.board import BoardSchemaTooNew, Note
from graphs.store.sqlite_board import Board
from tests.support.harness import ROOT

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
START_AND_WAIT = """
import sys, time
from graphs.settings import Settings
from graphs.store.stores import open_board
board = open_board(Settings(board_db=sys.argv[1], database_url=sys.argv[2] or None))
board.start_run(sys.argv[3], video="v.mp4", question="q", settings={}, thread_id="t")
print("started", flush=True)
time.sleep(600)
"""


@pytest.fixture(params=BACKENDS)
def location(request, tmp_path) -> tuple[str, str]:
    """(SQLite file, PostgreSQL URL or "") of a new board."""
    if request.param == "sqlite":
        return str(tmp_path / "board.sqlite"), ""
    return str(tmp_path / "unused.sqlite"), request.getfixturevalue("pg_url")


def open_at(location: tuple[str, str], **options):
    path, url = location
    if url:
        from graphs.store.postgres.board import PostgresBoard

        return PostgresBoard(url, **options)
    return Board(path, **options)


@pytest.fixture
def board(location):
    board = open_at(location)
    yield board
    board.close()


def note(key: str, turn: int = 0, index: int = 0, content: str = "red circle") -> Note:
    return Note(
        run_id="r1",
        key=key,
        author="sub_agent",
        turn=turn,
        call_index=index,
        start=0.0,
        end=10.0,
        frames=[0.5, 1.5],
        content=content,
        prompt_tokens=5,
    )


def start(board, run_id: str = "r1") -> None:
    board.start_run(run_id, video="v.mp4", question="q?", settings={"k": 1}, thread_id=run_id)


def test_notes_are_written_once_and_read_in_call_order(board):
    start(board)
    assert board.add_note(note("t1c0", turn=1, index=0))
    assert board.add_note(note("t0c1", turn=0, index=1))
    assert board.add_note(note("t0c0", turn=0, index=0))
    assert not board.add_note(note("t0c0", content="a different retry"))
    notes = board.notes("r1")
    assert [n.key for n in notes] == ["t0c0", "t0c1", "t1c0"]
    assert notes[0].content == "red circle" and notes[0].frames == [0.5, 1.5]


def test_a_runs_source_is_kept_and_read_back(board):
    """Where a question came from (an lmms-eval task and doc id) is stored with its run."""
    source = {"harness": "lmms-eval", "task": "videomme", "doc_id": 7}
    board.start_run("r1", video="v.mp4", question="q?", settings={}, thread_id="r1", source=source)
    start(board, "r2")
    assert board.run("r1")["source"] == source
    assert {r["run_id"]: r["source"] for r in board.runs()} == {"r1": source, "r2": {}}


def test_concurrent_writers_never_duplicate(board):
    start(board)
    keys = [f"t0c{i % 5}" for i in range(60)]
    with ThreadPoolExecutor(8) as pool:
        inserted = list(pool.map(lambda k: board.add_note(note(k)), keys))
    assert sum(inserted) == 5 and len(board.notes("r1")) == 5


def test_runs_traces_and_verdicts_survive_reopening(board, location):
    start(board)
    started = board.run("r1")["started_at"]
    board.add_note(note("t0c0"))
    board.set_verdict("r1", "t0c0", "UNSUPPORTED")
    board.finish_run("r1", status="answered", answer="A", trace={"run_id": "r1", "x": [1]})
    board.close()
    again = open_at(location)
    try:
        run = again.run("r1")
        assert run["status"] == "answered" and run["answer"] == "A"
        assert run["settings"] == {"k": 1} and run["started_at"] == started
        assert again.notes("r1")[0].verdict == "UNSUPPORTED"
        assert again.trace("r1") == {"run_id": "r1", "x": [1]}
        assert [t["run_id"] for t in again.traces()] == ["r1"]
        assert [r["run_id"] for r in again.runs()] == ["r1"]
    finally:
        again.close()


def test_a_resumed_run_keeps_its_start_and_notes(board):
    start(board)
    started = board.run("r1")["started_at"]
    board.add_note(note("t0c0"))
    board.finish_run("r1", status="failed", error="endpoint down")
    start(board)
    run = board.run("r1")
    assert run["status"] == "running" and run["error"] is None and run["finished_at"] is None
    assert run["started_at"] == started and len(board.notes("r1")) == 1


def test_claim_release_and_finish(board):
    start(board)
    assert json.loads(board.run("r1")["owner"])["pid"] == os.getpid()
    assert board.release_run("r1", status="interrupted", error="cancelled")
    assert not board.release_run("r1", error="twice"), "only a running run is released"
    assert board.claim_run("r1") and board.run("r1")["status"] == "running"
    assert not board.claim_run("no-such-run")
    board.finish_run("r1", status="answered", answer="A")
    assert not board.release_run("r1", error="late"), "a finished run stays finished"
    with pytest.raises(ValueError, match="final run status"):
        board.release_run("r1", status="running", error="x")


def test_finishing_an_unregistered_run_writes_nothing(board):
    with pytest.raises(ValueError, match="not on the board"):
        board.finish_run("nobody", status="answered", answer="A", trace={"run_id": "nobody"})
    assert board.trace("nobody") is None and board.run("nobody") is None


def test_a_killed_owner_s_run_is_interrupted_and_a_live_one_left_alone(location):
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", START_AND_WAIT, *location, run_id],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for run_id in ("dead-run", "live-run")
    ]
    dead, live = procs
    try:
        assert [p.stdout.readline().strip() for p in procs] == ["started", "started"]
        dead.kill()
        dead.wait()
        board = open_at(location)
        assert board.run("dead-run")["status"] == "interrupted"
        assert f"pid {dead.pid}" in board.run("dead-run")["error"]
        assert board.run("live-run")["status"] == "running", "a live owner's run is left alone"
        assert board.run_is_live("live-run") and not board.run_is_live("dead-run")
        board.close()
    finally:
        live.kill()
        live.wait()
    board = open_at(location)
    assert board.run("live-run")["status"] == "interrupted"
    board.close()


@pytest.mark.postgres
def test_a_run_of_another_host_lives_while_its_lease_is_renewed(pg_url):
    from graphs.store.postgres.board import PostgresBoard

    board = PostgresBoard(pg_url, lease_s=0.6)
    start(board, "here")
    start(board, "there")
    elsewhere = owners.Owner("another-host", "", 1, "")
    with board.connection() as conn:  # as if another host's process had started it
        conn.execute(
            "update paravt_runs set owner = %s where run_id = 'there'", [elsewhere.to_json()]
        )
        board._disown("there")
    assert board.mark_stale_interrupted() == [] and board.run_is_live("there")
    time.sleep(1.5)  # this process renews "here" every 0.2 s; nobody renews "there"
    assert board.mark_stale_interrupted() == ["there"]
    assert "stopped renewing its lease" in board.run("there")["error"]
    assert board.run("here")["status"] == "running" and board.run_is_live("here")
    board.close()


def test_a_board_of_a_newer_version_is_refused_and_left_unchanged(location):
    board = open_at(location)
    start(board)
    if location[1]:
        with board.connection() as conn:
            conn.execute("update paravt_meta set value = '99' where key = 'schema_version'")
    else:
        board._db.execute("update meta set value = '99' where key = 'schema_version'")
        board._db.conn.commit()
    board.close()
    with pytest.raises(BoardSchemaTooNew, match=r"schema version 99.*newer paravt-graph"):
        open_at(location)
    if location[1]:
        import psycopg

        with psycopg.connect(location[1]) as conn:
            version = conn.execute("select value from paravt_meta where key = 'schema_version'")
            assert version.fetchone() == ("99",)
            assert conn.execute("select status from paravt_runs").fetchall() == [("running",)]
    else:
        import sqlite3

        with sqlite3.connect(location[0]) as conn:
            version = conn.execute("select value from meta where key = 'schema_version'")
            assert version.fetchone() == ("99",)
            assert conn.execute("select status from runs").fetchall() == [("running",)]


def test_ci_fails_rather_than_skips_without_postgresql(monkeypatch):
    from tests import conftest
    from tests.support import pg_cluster

    monkeypatch.setattr(pg_cluster, "server_bin", lambda: None)
    monkeypatch.setenv("PARAVT_POSTGRES_REQUIRED", "1")
    with pytest.raises(pytest.fail.Exception, match="PostgreSQL's server is not installed"):
        conftest.need_postgres()
    monkeypatch.delenv("PARAVT_POSTGRES_REQUIRED")
    with pytest.raises(pytest.skip.Exception, match="apt-get install postgresql"):
        conftest.need_postgres()
