"""The board: runs, notes and traces in one SQLite file (the only sqlite-utils code).

A run's life on the board: `start_run` (or `claim_run`, for a resumed one) marks it
`running` and names this process its owner; `finish_run` ends it `answered`, `no_answer`
or `failed`; `release_run` ends one that stopped early (`interrupted` when cancelled). A
process that dies first leaves it `running`: whoever opens the board next finds that its
owner has ended (`graphs.store.owners`) and marks it `interrupted` (`mark_stale_interrupted`).
Every process that runs the graph, the CLI or a LangGraph server, goes through these.
`graphs.store.postgres.board` keeps the same board in PostgreSQL (`graphs.store.board`).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

import sqlite_utils

from graphs.store import owners
from graphs.store.board import (
    NOTE_COLUMNS,
    RUN_STATUSES,
    BoardStore,
    Note,
    check_final,
    decode_run,
    note_from_row,
    too_new,
)
from graphs.store.errors import translated
from graphs.store.sqlite_locks import BUSY_TIMEOUT_S, is_locked, retry_locked

__all__ = ["RUN_STATUSES", "SCHEMA_VERSION", "Board", "BoardStore", "Note"]
log = logging.getLogger(__name__)

SCHEMA_VERSION = 3  # 2: runs.owner; 3: runs.source
TABLES = ("runs", "notes", "traces")
_T = TypeVar("_T")
_QUOTED = ", ".join(f'"{name}"' for name in NOTE_COLUMNS)  # "start", "end" are keywords
_INSERT_NOTE = (
    f"INSERT OR IGNORE INTO notes ({_QUOTED}) VALUES ({', '.join('?' * len(NOTE_COLUMNS))})"
)


class Board(BoardStore):
    """A SQLite board (WAL). Safe to share between threads; every write is idempotent."""

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
        mark_stale: bool = True,
    ):
        """Open (creating if needed) the board at `path`; with `mark_stale`, runs left
        `running` by ended processes are marked `interrupted` on opening. A file that is not
        a board, or a disk with no room for it, is an error that says what to do
        (`graphs.store.errors`)."""
        self.path = Path(path)
        self.where = str(self.path)
        self.busy_timeout_s = busy_timeout_s
        self._lock = threading.RLock()  # reentrant: `at_once` holds it around a method
        with translated(self.path, "board"):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, timeout=busy_timeout_s)
            self._db = sqlite_utils.Database(conn)
            try:
                retry_locked(self._open_schema, busy_timeout_s)
                # WAL with NORMAL sync: a commit survives the process being killed, and only
                # an OS crash or power loss can drop the last few, never corrupt the file.
                # FULL would fsync every note on a run's path (0.3-3 ms each here); an eval's
                # own record, samples.jsonl, is fsynced line by line.
                conn.execute("PRAGMA synchronous=NORMAL")
                if mark_stale:
                    self.mark_stale_interrupted()
            except BaseException:
                conn.close()
                raise

    def _open_schema(self) -> None:
        """WAL, then the tables in one IMMEDIATE transaction: the first of several processes
        creating a new file takes the write lock; the others wait for it, then find the tables."""
        conn = self._db.conn
        with self._lock:
            if conn.in_transaction:
                conn.rollback()  # a try that lost a race
            if self._db.journal_mode != "wal":
                conn.execute("PRAGMA journal_mode=wal")
            conn.execute("BEGIN IMMEDIATE")
            try:
                self._create_tables()
                conn.commit()
            except BaseException:
                conn.rollback()
                raise

    def _create_tables(self) -> None:
        db = self._db
        if db["meta"].exists():  # a newer schema is refused before anything is written
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row and int(row[0]) > SCHEMA_VERSION:
                raise too_new(str(self.path), int(row[0]), SCHEMA_VERSION)
        db["runs"].create(
            {
                "run_id": str,
                "thread_id": str,
                "video": str,
                "question": str,
                "settings": str,
                "status": str,
                "answer": str,
                "error": str,
                "started_at": float,
                "finished_at": float,
                "owner": str,  # graphs.store.owners.Owner of a running run, as JSON
                "source": str,  # where the question came from (a harness's task, doc id), JSON
            },
            pk="run_id",
            if_not_exists=True,
        )
        db["notes"].create(
            {
                "run_id": str,
                "key": str,
                "author": str,
                "turn": int,
                "call_index": int,
                "start": float,
                "end": float,
                "frames": str,
                "content": str,
                "verdict": str,
                "prompt_tokens": int,
                "completion_tokens": int,
                "latency_s": float,
                "created_at": float,
            },
            pk=("run_id", "key"),
            foreign_keys=[("run_id", "runs", "run_id")],
            if_not_exists=True,
        )
        db["traces"].create(
            {"run_id": str, "trace": str, "written_at": float},
            pk="run_id",
            foreign_keys=[("run_id", "runs", "run_id")],
            if_not_exists=True,
        )
        columns = db["runs"].columns_dict
        if "owner" not in columns:  # a board from schema version 1
            db.execute("ALTER TABLE runs ADD COLUMN owner TEXT")
        if "source" not in columns:  # a board from schema version 1 or 2
            db.execute("ALTER TABLE runs ADD COLUMN source TEXT")
        db["meta"].create({"key": str, "value": str}, pk="key", if_not_exists=True)
        db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
            [str(SCHEMA_VERSION)],
        )

    def start_run(
        self,
        run_id: str,
        *,
        video: str,
        question: str,
        settings: dict[str, Any],
        thread_id: str,
        source: dict[str, Any] | None = None,
    ) -> None:
        """Register a run owned by this process; a resumed run keeps its start time and notes.
        `source` says where the question came from (an evaluation harness's task and doc id)."""
        with self._lock:
            if self._claim(run_id):
                return
            self._db.execute(
                "INSERT INTO runs (run_id, thread_id, video, question, settings, status, "
                "started_at, owner, source) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                [
                    run_id,
                    thread_id,
                    video,
                    question,
                    json.dumps(settings, sort_keys=True),
                    time.time(),
                    owners.current().to_json(),
                    json.dumps(source or {}, sort_keys=True),
                ],
            )

    def claim_run(self, run_id: str) -> bool:
        """Mark a registered run `running` and owned by this process (a resumed run);
        False when the board has no such run."""
        with self._lock:
            return self._claim(run_id)

    def _claim(self, run_id: str) -> bool:
        cursor = self._db.execute(
            "UPDATE runs SET status = 'running', error = NULL, finished_at = NULL, owner = ? "
            "WHERE run_id = ?",
            [owners.current().to_json(), run_id],
        )
        return cursor.rowcount > 0

    def release_run(self, run_id: str, *, status: str = "interrupted", error: str) -> bool:
        """End a run that stopped before finishing (cancelled, or an unexpected error), if it
        is still `running`; False when it is not (already finished, or not registered)."""
        check_final(status)
        with self._lock:
            cursor = self._db.execute(
                "UPDATE runs SET status = ?, error = ?, finished_at = ? "
                "WHERE run_id = ? AND status = 'running'",
                [status, error, time.time(), run_id],
            )
            return cursor.rowcount > 0

    def _running_owners(self) -> list[dict[str, Any]]:
        return self._rows("SELECT run_id, owner FROM runs WHERE status = 'running'")

    def finish_run(
        self,
        run_id: str,
        *,
        status: str,
        answer: str | None = None,
        error: str | None = None,
        trace: dict[str, Any] | None = None,
    ) -> None:
        now = time.time()
        with self._lock, self._db.conn as conn:  # one transaction: the run and its trace
            updated = conn.execute(
                "UPDATE runs SET status = ?, answer = ?, error = ?, finished_at = ? "
                "WHERE run_id = ?",
                [status, answer, error, now, run_id],
            ).rowcount
            if not updated:  # rolled back with the transaction: no trace without its run
                raise ValueError(f"run {run_id} is not on the board {self.path}")
            if trace is not None:
                conn.execute(
                    "INSERT INTO traces (run_id, trace, written_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (run_id) DO UPDATE SET trace = excluded.trace, "
                    "written_at = excluded.written_at",
                    [run_id, json.dumps(trace), now],
                )

    def add_note(self, note: Note) -> bool:
        """Write a note once; returns False when (run_id, key) is already on the board."""
        row = asdict(note)
        row["frames"] = json.dumps(row["frames"])
        with self._lock:
            cursor = self._db.execute(_INSERT_NOTE, [row[name] for name in NOTE_COLUMNS])
            return cursor.rowcount == 1

    def set_verdict(self, run_id: str, key: str, verdict: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE notes SET verdict = ? WHERE run_id = ? AND key = ?", [verdict, run_id, key]
            )

    def notes(self, run_id: str) -> list[Note]:
        """A run's notes in the order they were asked for (turn, then call index)."""
        rows = self._rows("SELECT * FROM notes WHERE run_id = ? ORDER BY turn, call_index", run_id)
        return [note_from_row(row) for row in rows]

    def run(self, run_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM runs WHERE run_id = ?", run_id)
        return decode_run(rows[0]) if rows else None

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest runs first."""
        with self._lock:
            rows = list(self._db["runs"].rows_where(order_by="started_at desc", limit=limit))
        return [decode_run(row) for row in rows]

    def trace(self, run_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT trace FROM traces WHERE run_id = ?", run_id)
        return json.loads(rows[0]["trace"]) if rows else None

    def traces(self) -> Iterator[dict[str, Any]]:
        """Every stored trace, oldest first."""
        with self._lock:
            rows = list(self._db["traces"].rows_where(order_by="written_at"))
        for row in rows:
            yield json.loads(row["trace"])

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """Every row of the runs, notes and traces tables as stored (for a copy elsewhere)."""
        return {t: self._rows(f"SELECT * FROM {t} ORDER BY rowid") for t in TABLES}

    def absorb(self, rows: dict[str, list[dict[str, Any]]]) -> int:
        """Add another board's `dump` (rows already here are kept); the rows added."""
        added = 0
        with self._lock, self._db.conn as conn:
            for table in TABLES:
                for row in rows.get(table, []):
                    names, marks = ", ".join(f'"{k}"' for k in row), ", ".join("?" * len(row))
                    sql = f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({marks})"
                    added += conn.execute(sql, list(row.values())).rowcount
        return added

    def _rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        """The rows of one query as dicts (plain SQL: sqlite-utils' helpers look the table up
        and read its schema on every call, most of a run's board time)."""
        with self._lock:
            cursor = self._db.conn.execute(sql, params)
            names = [column[0] for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def at_once(
        self, method: Callable[..., _T], /, *args: Any, **kwargs: Any
    ) -> tuple[bool, _T | None]:
        """``(True, method(*args, **kwargs))`` if this board's call can run now without waiting
        (for its lock in this process, or SQLite's in another); ``(False, None)`` if it would
        wait, and then nothing was written. For a caller that must not block, an event loop."""
        if not self._lock.acquire(blocking=False):
            return False, None
        conn = self._db.conn
        try:
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                return True, method(*args, **kwargs)
            except sqlite3.OperationalError as exc:
                if not is_locked(exc):
                    raise
                if conn.in_transaction:
                    conn.rollback()
                return False, None
            finally:
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
        finally:
            self._lock.release()

    def close(self) -> None:
        with self._lock:
            self._db.conn.close()
