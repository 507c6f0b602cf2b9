"""The board: runs, notes and traces in one SQLite file (the only sqlite-utils code)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Note:
    """One sub-agent's finding about a window, with its provenance and cost."""

    run_id: str
    key: str  # unique within a run, e.g. "t0c2": turn 0, call 2
    author: str
    turn: int
    call_index: int
    start: float
    end: float
    frames: list[float]  # timestamps of the frames the note was made from
    content: str
    verdict: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    created_at: float = field(default_factory=time.time)


class Board:
    """A SQLite board (WAL). Safe to share between threads; every write is idempotent."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._db = sqlite_utils.Database(conn)
        self._lock = threading.Lock()
        self._db.enable_wal()
        self._create_schema()

    def _create_schema(self) -> None:
        db = self._db
        with self._lock:
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
            db["meta"].create({"key": str, "value": str}, pk="key", if_not_exists=True)
            db["meta"].upsert({"key": "schema_version", "value": str(SCHEMA_VERSION)}, pk="key")

    def start_run(
        self, run_id: str, *, video: str, question: str, settings: dict[str, Any], thread_id: str
    ) -> None:
        """Register a run; a resumed run keeps its original start time and notes."""
        with self._lock:
            if self._db["runs"].count_where("run_id = ?", [run_id]):
                self._db["runs"].update(run_id, {"status": "running", "error": None})
                return
            self._db["runs"].insert(
                {
                    "run_id": run_id,
                    "thread_id": thread_id,
                    "video": video,
                    "question": question,
                    "settings": json.dumps(settings, sort_keys=True),
                    "status": "running",
                    "answer": None,
                    "error": None,
                    "started_at": time.time(),
                    "finished_at": None,
                }
            )

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
        with self._lock, self._db.conn:
            self._db["runs"].update(
                run_id, {"status": status, "answer": answer, "error": error, "finished_at": now}
            )
            if trace is not None:
                self._db["traces"].upsert(
                    {"run_id": run_id, "trace": json.dumps(trace), "written_at": now},
                    pk="run_id",
                )

    def add_note(self, note: Note) -> bool:
        """Write a note once; returns False when (run_id, key) is already on the board."""
        row = asdict(note)
        row["frames"] = json.dumps(row["frames"])
        with self._lock:
            table = self._db["notes"]
            before = table.count_where("run_id = ? and key = ?", [note.run_id, note.key])
            if before:
                return False
            table.insert(row, pk=("run_id", "key"), ignore=True)
            return True

    def set_verdict(self, run_id: str, key: str, verdict: str) -> None:
        with self._lock:
            self._db["notes"].update((run_id, key), {"verdict": verdict})

    def notes(self, run_id: str) -> list[Note]:
        """A run's notes in the order they were asked for (turn, then call index)."""
        with self._lock:
            rows = list(
                self._db["notes"].rows_where("run_id = ?", [run_id], order_by="turn, call_index")
            )
        return [Note(**{**row, "frames": json.loads(row["frames"])}) for row in rows]

    def run(self, run_id: str) -> dict[str, Any] | None:
        with self._lock:
            rows = list(self._db["runs"].rows_where("run_id = ?", [run_id]))
        return _decode_run(rows[0]) if rows else None

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest runs first."""
        with self._lock:
            rows = list(self._db["runs"].rows_where(order_by="started_at desc", limit=limit))
        return [_decode_run(row) for row in rows]

    def trace(self, run_id: str) -> dict[str, Any] | None:
        with self._lock:
            rows = list(self._db["traces"].rows_where("run_id = ?", [run_id]))
        return json.loads(rows[0]["trace"]) if rows else None

    def traces(self) -> Iterator[dict[str, Any]]:
        """Every stored trace, oldest first."""
        with self._lock:
            rows = list(self._db["traces"].rows_where(order_by="written_at"))
        for row in rows:
            yield json.loads(row["trace"])

    def close(self) -> None:
        with self._lock:
            self._db.conn.close()


def _decode_run(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "settings": json.loads(row["settings"] or "{}")}
