"""The SQLite board: schema, WAL, idempotent notes, concurrent writers, reopening."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from graphs.store.sqlite_board import Board, Note


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


def test_notes_are_written_once_and_read_in_call_order(board):
    board.start_run("r1", video="v.mp4", question="q?", settings={"k": 1}, thread_id="t")
    assert board.add_note(note("t1c0", turn=1, index=0))
    assert board.add_note(note("t0c1", turn=0, index=1))
    assert board.add_note(note("t0c0", turn=0, index=0))
    assert not board.add_note(note("t0c0", content="a different retry"))
    notes = board.notes("r1")
    assert [n.key for n in notes] == ["t0c0", "t0c1", "t1c0"]
    assert notes[0].content == "red circle" and notes[0].frames == [0.5, 1.5]


def test_the_file_is_real_sqlite_in_wal_mode_and_survives_reopening(tmp_path):
    path = tmp_path / "b.sqlite"
    first = Board(path)
    first.start_run("r1", video="v", question="q", settings={}, thread_id="t")
    first.add_note(note("t0c0"))
    first.finish_run("r1", status="answered", answer="A", trace={"run_id": "r1", "x": [1]})
    first.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"
        assert conn.execute("select count(*) from notes").fetchone()[0] == 1
    again = Board(path)
    assert again.run("r1")["answer"] == "A" and again.run("r1")["settings"] == {}
    assert again.trace("r1") == {"run_id": "r1", "x": [1]}
    assert [t["run_id"] for t in again.traces()] == ["r1"]


def test_a_resumed_run_keeps_its_start_and_notes(board):
    board.start_run("r1", video="v", question="q", settings={}, thread_id="t")
    started = board.run("r1")["started_at"]
    board.add_note(note("t0c0"))
    board.finish_run("r1", status="failed", error="endpoint down")
    board.start_run("r1", video="v", question="q", settings={}, thread_id="t")
    run = board.run("r1")
    assert run["status"] == "running" and run["error"] is None
    assert run["started_at"] == started and len(board.notes("r1")) == 1


def test_concurrent_writers_never_duplicate(board):
    board.start_run("r1", video="v", question="q", settings={}, thread_id="t")
    keys = [f"t0c{i % 5}" for i in range(50)]
    with ThreadPoolExecutor(8) as pool:
        inserted = list(pool.map(lambda k: board.add_note(note(k)), keys))
    assert sum(inserted) == 5 and len(board.notes("r1")) == 5


def test_verdicts_are_stored_with_the_note(board):
    board.start_run("r1", video="v", question="q", settings={}, thread_id="t")
    board.add_note(note("t0c0"))
    board.set_verdict("r1", "t0c0", "UNSUPPORTED")
    assert board.notes("r1")[0].verdict == "UNSUPPORTED"


def test_finishing_a_run_the_board_never_registered_is_an_error_and_writes_nothing(board):
    with pytest.raises(ValueError, match="not on the board"):
        board.finish_run("nobody", status="answered", answer="A", trace={"run_id": "nobody"})
    assert board.trace("nobody") is None and board.run("nobody") is None
