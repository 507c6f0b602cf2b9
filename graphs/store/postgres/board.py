"""The board in PostgreSQL: the same runs, notes and traces as the SQLite file, for many hosts.

The tables are SQLite's with a ``paravt_`` prefix (they share a database with LangGraph's
checkpoint tables) and one more column: ``lease_until``, in the database's clock. A
process renews the lease of every run it owns while it lives (`LEASE_S`, renewed every
third of it); a run whose owner is on another host is stale once its lease has lapsed,
since that host's processes cannot be looked up (`graphs.store.owners` still decides for owners
on this host, at once). Every write is one idempotent statement or one transaction,
retried on a new connection if the link drops (`graphs.store.postgres.pool`).

Schema setup takes a transaction-scoped advisory lock, so that many processes opening a
new database at once create the tables once; a database already at this version is not
locked at all, and one from a newer version is refused before anything is written.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row

from graphs.store import owners
from graphs.store.board import (
    NOTE_COLUMNS,
    BoardStore,
    Note,
    check_final,
    decode_run,
    note_from_row,
    too_new,
)
from graphs.store.postgres.pool import LINK_ERRORS, RETRY_S, Outage, open_pool
from graphs.store.postgres.url import redact

log = logging.getLogger(__name__)

_T = TypeVar("_T")
SCHEMA_VERSION = 1
LEASE_S = 60.0
_LOCK_KEY = 0x70617261_7674  # "paravt": the advisory lock of schema setup
_NOW = "extract(epoch from clock_timestamp())"
_QUOTED = ", ".join(f'"{name}"' for name in NOTE_COLUMNS)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS paravt_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS paravt_runs (
    run_id text PRIMARY KEY, thread_id text, video text, question text, settings text,
    status text, answer text, error text, started_at double precision,
    finished_at double precision, owner text, lease_until double precision, source text);
CREATE INDEX IF NOT EXISTS paravt_runs_started ON paravt_runs (started_at);
CREATE TABLE IF NOT EXISTS paravt_notes (
    run_id text NOT NULL, key text NOT NULL, author text, turn integer, call_index integer,
    "start" double precision, "end" double precision, frames text, content text,
    verdict text, prompt_tokens bigint, completion_tokens bigint,
    latency_s double precision, created_at double precision, PRIMARY KEY (run_id, key));
CREATE TABLE IF NOT EXISTS paravt_traces (
    run_id text PRIMARY KEY, trace text, written_at double precision);
CREATE INDEX IF NOT EXISTS paravt_traces_written ON paravt_traces (written_at);
"""
_RUN_COLUMNS = (
    "run_id, thread_id, video, question, settings, status, answer, error, started_at, "
    "finished_at, owner, source"
)


class PostgresBoard(BoardStore):
    """A board in the PostgreSQL database at ``url``; safe to share between threads."""

    def __init__(
        self,
        url: str,
        *,
        mark_stale: bool = True,
        lease_s: float = LEASE_S,
        retry_s: float = RETRY_S,
        max_connections: int = 4,
    ):
        """Open the board (creating its tables if needed); with `mark_stale`, runs left
        `running` by ended owners are marked `interrupted` on opening."""
        self.url, self.where, self.lease_s = url, redact(url), lease_s
        self._pool = open_pool(url, max_size=max_connections, retry_s=retry_s)
        self._outage = Outage(url, retry_s)
        self._owned: set[str] = set()
        self._owned_lock = threading.Lock()
        self._stop = threading.Event()
        self._heart: threading.Thread | None = None
        try:
            self._call("opening the board", self._setup)
            if mark_stale:
                self.mark_stale_interrupted()
        except BaseException:
            self._pool.close()
            raise

    def _call(self, what: str, action: Callable[[psycopg.Connection], _T]) -> _T:
        def attempt() -> _T:
            with self._pool.connection() as conn:
                return action(conn)

        return self._outage.run(what, attempt)

    def connection(self):
        """A pooled connection for the block (autocommit), as psycopg's pool lends it."""
        return self._pool.connection()

    def _setup(self, conn: psycopg.Connection) -> None:
        if self._version(conn) == SCHEMA_VERSION:
            return
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
            found = self._version(conn)
            if found is not None and found > SCHEMA_VERSION:
                raise too_new(self.where, found, SCHEMA_VERSION)
            if found != SCHEMA_VERSION:
                conn.execute(_SCHEMA)
                conn.execute(
                    "INSERT INTO paravt_meta (key, value) VALUES ('schema_version', %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [str(SCHEMA_VERSION)],
                )

    @staticmethod
    def _version(conn: psycopg.Connection) -> int | None:
        (table,) = conn.execute("SELECT to_regclass('paravt_meta')").fetchone()
        if table is None:
            return None
        row = conn.execute("SELECT value FROM paravt_meta WHERE key = 'schema_version'")
        found = row.fetchone()
        return int(found[0]) if found else None

    # Runs.
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
        sql = (
            "INSERT INTO paravt_runs (run_id, thread_id, video, question, settings, status, "
            f"started_at, owner, lease_until, source) VALUES (%s, %s, %s, %s, %s, 'running', "
            f"%s, %s, {_NOW} + %s, %s) ON CONFLICT (run_id) DO UPDATE SET status = 'running', "
            "error = NULL, finished_at = NULL, owner = excluded.owner, "
            "lease_until = excluded.lease_until"
        )
        params = [
            run_id,
            thread_id,
            video,
            question,
            json.dumps(settings, sort_keys=True),
            time.time(),
            owners.current().to_json(),
            self.lease_s,
            json.dumps(source or {}, sort_keys=True),
        ]
        self._call("starting a run", lambda conn: conn.execute(sql, params))
        self._own(run_id)

    def claim_run(self, run_id: str) -> bool:
        sql = (
            "UPDATE paravt_runs SET status = 'running', error = NULL, finished_at = NULL, "
            f"owner = %s, lease_until = {_NOW} + %s WHERE run_id = %s"
        )
        params = [owners.current().to_json(), self.lease_s, run_id]
        claimed = self._call("claiming a run", lambda c: c.execute(sql, params).rowcount > 0)
        if claimed:
            self._own(run_id)
        return claimed

    def release_run(self, run_id: str, *, status: str = "interrupted", error: str) -> bool:
        check_final(status)
        sql = (
            "UPDATE paravt_runs SET status = %s, error = %s, finished_at = %s "
            "WHERE run_id = %s AND status = 'running'"
        )
        params = [status, error, time.time(), run_id]
        released = self._call("ending a run", lambda c: c.execute(sql, params).rowcount > 0)
        self._disown(run_id)
        return released

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

        def finish(conn: psycopg.Connection) -> None:
            with conn.transaction():
                updated = conn.execute(
                    "UPDATE paravt_runs SET status = %s, answer = %s, error = %s, "
                    "finished_at = %s WHERE run_id = %s",
                    [status, answer, error, now, run_id],
                ).rowcount
                if not updated:  # rolled back with the transaction: no trace without its run
                    raise ValueError(f"run {run_id} is not on the board {self.where}")
                if trace is not None:
                    conn.execute(
                        "INSERT INTO paravt_traces (run_id, trace, written_at) "
                        "VALUES (%s, %s, %s) ON CONFLICT (run_id) DO UPDATE SET "
                        "trace = excluded.trace, written_at = excluded.written_at",
                        [run_id, json.dumps(trace), now],
                    )

        self._call("finishing a run", finish)
        self._disown(run_id)

    # Notes.
    def add_note(self, note: Note) -> bool:
        row = asdict(note)
        row["frames"] = json.dumps(row["frames"])
        sql = (
            f"INSERT INTO paravt_notes ({_QUOTED}) VALUES "
            f"({', '.join(['%s'] * len(NOTE_COLUMNS))}) ON CONFLICT DO NOTHING"
        )
        values = [row[name] for name in NOTE_COLUMNS]
        return self._call("writing a note", lambda c: c.execute(sql, values).rowcount == 1)

    def set_verdict(self, run_id: str, key: str, verdict: str) -> None:
        sql = "UPDATE paravt_notes SET verdict = %s WHERE run_id = %s AND key = %s"
        self._call("writing a verdict", lambda c: c.execute(sql, [verdict, run_id, key]))

    # Reads.
    def _rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        def read(conn: psycopg.Connection) -> list[dict[str, Any]]:
            with conn.cursor(row_factory=dict_row) as cursor:
                return cursor.execute(sql, params).fetchall()

        return self._call("reading the board", read)

    def notes(self, run_id: str) -> list[Note]:
        sql = f"SELECT {_QUOTED} FROM paravt_notes WHERE run_id = %s ORDER BY turn, call_index"
        return [note_from_row(row) for row in self._rows(sql, run_id)]

    def run(self, run_id: str) -> dict[str, Any] | None:
        rows = self._rows(f"SELECT {_RUN_COLUMNS} FROM paravt_runs WHERE run_id = %s", run_id)
        return decode_run(rows[0]) if rows else None

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        sql = f"SELECT {_RUN_COLUMNS} FROM paravt_runs ORDER BY started_at DESC LIMIT %s"
        return [decode_run(row) for row in self._rows(sql, limit)]

    def trace(self, run_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT trace FROM paravt_traces WHERE run_id = %s", run_id)
        return json.loads(rows[0]["trace"]) if rows else None

    def traces(self) -> Iterator[dict[str, Any]]:
        for row in self._rows("SELECT trace FROM paravt_traces ORDER BY written_at"):
            yield json.loads(row["trace"])

    # Owners and leases.
    def _running_owners(self) -> list[dict[str, Any]]:
        return self._rows(
            "SELECT run_id, owner, coalesce(lease_until < "
            f"{_NOW}, true) AS lease_lapsed FROM paravt_runs WHERE status = 'running'"
        )

    def _remote_alive(self, row: dict[str, Any]) -> bool:
        if "lease_lapsed" not in row:
            sql = f"SELECT coalesce(lease_until < {_NOW}, true) AS lease_lapsed FROM paravt_runs "
            found = self._rows(sql + "WHERE run_id = %s", row["run_id"])
            row = found[0] if found else {"lease_lapsed": True}
        return not row["lease_lapsed"]

    def _stale_message(self, row: dict[str, Any]) -> str:
        owner = owners.Owner.from_json(row.get("owner"))
        if owner is not None and owners.is_alive(owner) is None:
            return (
                f"interrupted: its process (pid {owner.pid} on {owner.host}) stopped renewing "
                "its lease; rerun with the same thread id to resume"
            )
        return super()._stale_message(row)

    def _own(self, run_id: str) -> None:
        with self._owned_lock:
            self._owned.add(run_id)
            if self._heart is None:
                self._heart = threading.Thread(
                    target=self._beat, name="paravt-board-leases", daemon=True
                )
                self._heart.start()

    def _disown(self, run_id: str) -> None:
        with self._owned_lock:
            self._owned.discard(run_id)

    def _beat(self) -> None:
        """Renew the leases of this process's running runs until the board is closed."""
        while not self._stop.wait(self.lease_s / 3):
            with self._owned_lock:
                owned = sorted(self._owned)
            if not owned:
                continue
            try:
                with self._pool.connection() as conn:
                    conn.execute(
                        f"UPDATE paravt_runs SET lease_until = {_NOW} + %s "
                        "WHERE run_id = ANY(%s) AND status = 'running'",
                        [self.lease_s, owned],
                    )
            except LINK_ERRORS as exc:  # the next beat tries again; a lapse is the cost
                log.info("could not renew the leases of %d runs: %s", len(owned), exc)

    def close(self) -> None:
        self._stop.set()
        if self._heart is not None:
            self._heart.join(timeout=5)
        self._pool.close()
