"""The CLI's LangGraph checkpointer: one SQLite file, safe for many writers, cheap per step.

It is LangGraph's `SqliteSaver` (same schema and statements, so a file written by either
`SqliteSaver` or `AsyncSqliteSaver` reads back in the other) with async methods that run
each operation on the event loop: it is 0.1-0.5 ms of CPU without a disk wait (NORMAL
sync, below), less than a trip to a thread costs a loaded two-core machine in wake-ups and
waits for the GIL. `AsyncSqliteSaver` makes one thread trip per cursor, statement, close
and commit, about 110 per K = 5 run, most of the checkpoint's share of the orchestration
overhead (``bench/run_overhead.py``).

Concurrency. On the loop an operation never waits: it runs with SQLite's busy timeout at
zero, and when another process holds the lock it goes, with every operation after it until
the queue is empty, to one worker thread that waits for the lock (up to `BUSY_TIMEOUT_S`)
and retries it after a rollback. So the loop is never blocked by another process, and
operations stay in order. With dozens of runs writing to one file at once, SQLite's
default (a 5 s wait, then "database is locked") fails runs whose answer is already on the
board.

Durability. The file is in WAL mode with ``synchronous=NORMAL``: a commit is safe against a
crash of the process (``kill -9``), and only an OS crash or power loss can drop the last few
checkpoints, never corrupt the file. The board is kept the same way (``graphs.store.sqlite_board``).
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any, TypeVar

from langgraph.checkpoint.sqlite import SqliteSaver

from graphs.store.errors import translated
from graphs.store.sqlite_locks import BUSY_TIMEOUT_S, is_locked, retry_locked

_T = TypeVar("_T")


class SqliteCheckpointer(SqliteSaver):
    """`SqliteSaver` with its async methods on the loop and writes retried on lock conflicts."""

    def __init__(self, conn: sqlite3.Connection, *, busy_timeout_s: float = BUSY_TIMEOUT_S):
        super().__init__(conn)
        self.busy_timeout_s = busy_timeout_s
        conn.execute("PRAGMA busy_timeout = 0")  # the loop's operations never wait (`_run`)
        self.lock = threading.RLock()  # held across an operation on the loop, and its cursors
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="paravt-checkpoints")
        self._queued = 0  # operations handed to the worker and not yet done

    def close(self) -> None:
        """Finish the queued operations and stop the worker (the connection is the caller's)."""
        self._worker.shutdown(wait=True)

    def _rolled_back(self, action: Callable[[], _T]) -> _T:
        """`action`, its transaction rolled back if SQLite fails it (a lock, most often)."""
        try:
            return action()
        except sqlite3.OperationalError:
            if self.conn.in_transaction:
                self.conn.rollback()
            raise

    def _waiting(self, action: Callable[[], _T]) -> _T:
        """`action` with SQLite's busy timeout on: the worker and the sync API wait for
        another process's lock, the loop never does (`_at_once`)."""
        with self.lock:
            self.conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            try:
                return action()
            finally:
                self.conn.execute("PRAGMA busy_timeout = 0")

    def _retried(self, action: Callable[[], _T]) -> _T:
        """`action` waiting out a lock: the busy timeout, then whole retries (some conflicts
        fail at once whatever the timeout: graphs.store.sqlite_locks)."""
        return self._waiting(
            lambda: retry_locked(lambda: self._rolled_back(action), self.busy_timeout_s)
        )

    def _at_once(self, action: Callable[[], _T]) -> _T:
        """`action` with SQLite's busy timeout at zero: it fails at once on a lock."""
        with self.lock:
            return self._rolled_back(action)

    async def _run(self, action: Callable[[], _T]) -> _T:
        """`action` on the loop, or behind the queued ones in the worker if another process
        holds the lock or operations are queued there already."""
        if not self._queued:
            try:
                return self._at_once(action)
            except sqlite3.OperationalError as exc:
                if not is_locked(exc):
                    raise
        return await self._queue(lambda: self._retried(action))

    async def _queue(self, action: Callable[[], _T]) -> _T:
        """`action` in the worker; the loop runs none of its own until the worker is done."""
        self._queued += 1
        try:
            return await self._in_worker(action)
        finally:
            self._queued -= 1

    async def _in_worker(self, action: Callable[[], _T]) -> _T:
        return await asyncio.get_running_loop().run_in_executor(self._worker, action)

    # Writes and setup: retried (the reads wait on the busy timeout alone).
    def setup(self) -> None:
        if not self.is_setup:
            self._retried(super().setup)

    def open_log(self) -> None:
        """Set NORMAL sync and make this connection's first write now, when the file is
        opened: a connection's first commit opens the write-ahead log and its index, 0.6-2.5
        ms here, which would otherwise land on a run's first step. The write stores the
        schema's own ``user_version`` unchanged."""

        def rewrite_version() -> None:
            (version,) = self.conn.execute("PRAGMA user_version").fetchone()
            self.conn.execute(f"PRAGMA user_version = {int(version)}")
            self.conn.commit()

        self.conn.execute("PRAGMA synchronous=NORMAL")
        self._retried(rewrite_version)

    def put(self, config, checkpoint, metadata, new_versions):
        put = super().put
        return self._retried(lambda: put(config, checkpoint, metadata, new_versions))

    def put_writes(self, config, writes, task_id, task_path: str = "") -> None:
        put_writes = super().put_writes
        self._retried(lambda: put_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        delete = super().delete_thread
        self._retried(lambda: delete(thread_id))

    # The async API LangGraph's async loop and `aget_state` use. The retries of the sync
    # methods above do not run on the loop: an operation there is tried once (`_run`).
    async def aget_tuple(self, config):
        return await self._run(functools.partial(SqliteSaver.get_tuple, self, config))

    async def alist(self, config, *, filter=None, before=None, limit=None) -> AsyncIterator:
        rows = await self._queue(  # a whole history can be long: off the loop
            lambda: self._waiting(
                lambda: list(self.list(config, filter=filter, before=before, limit=limit))
            )
        )
        for row in rows:
            yield row

    async def aput(self, config, checkpoint, metadata, new_versions):
        return await self._run(
            functools.partial(SqliteSaver.put, self, config, checkpoint, metadata, new_versions)
        )

    async def aput_writes(self, config, writes, task_id, task_path: str = "") -> None:
        await self._run(
            functools.partial(SqliteSaver.put_writes, self, config, writes, task_id, task_path)
        )

    async def adelete_thread(self, thread_id: str) -> None:
        await self._run(functools.partial(SqliteSaver.delete_thread, self, thread_id))

    async def aget_delta_channel_history(
        self, *, config, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        history = functools.partial(
            self.get_delta_channel_history, config=config, channels=channels
        )
        return await self._queue(lambda: self._waiting(history))


def saved(path: str | Path) -> tuple[list[Any], list[tuple]]:
    """Every checkpoint of the file at ``path`` (`CheckpointTuple`s) and every pending write
    as stored: (thread, namespace, checkpoint, task, task path, index, channel, type, value)."""
    with closing(sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True)) as conn:
        checkpoints = list(SqliteSaver(conn).list(None))
        writes = conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, "
            "channel, type, value FROM writes ORDER BY rowid"
        ).fetchall()
    return checkpoints, writes


@asynccontextmanager
async def open_checkpointer(
    path: str | Path, *, busy_timeout_s: float = BUSY_TIMEOUT_S
) -> AsyncIterator[SqliteCheckpointer]:
    """A checkpointer on the SQLite file at `path` (created with its folder if needed); a file
    that is not one, or a disk with no room for it, is an error that says what to do."""
    path = Path(path)
    with translated(path, "checkpoints"):
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=busy_timeout_s, check_same_thread=False)
    with closing(conn):
        saver = SqliteCheckpointer(conn, busy_timeout_s=busy_timeout_s)
        try:
            with translated(path, "checkpoints"):
                await saver._in_worker(saver.setup)
                await saver._in_worker(saver.open_log)
            yield saver
        finally:
            saver.close()
