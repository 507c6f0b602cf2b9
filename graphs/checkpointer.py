"""The CLI's LangGraph checkpointer: AsyncSqliteSaver on its own file, safe for many writers.

`AsyncSqliteSaver.from_conn_string` opens its connection with SQLite's default 5 s busy
timeout and gives up on the first "database is locked": with dozens of runs writing
checkpoints to one file at once, some runs then fail after their answer is on the board.
Here the connection waits up to `BUSY_TIMEOUT_S` for another writer, and every write (and
the first creation of the tables) is retried on a lock conflict after a rollback.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from graphs.sqlite_locks import BUSY_TIMEOUT_S, aretry_locked


class SqliteCheckpointer(AsyncSqliteSaver):
    """AsyncSqliteSaver whose setup and writes are retried when another process holds a lock."""

    busy_timeout_s: float = BUSY_TIMEOUT_S

    async def _rollback(self) -> None:
        if self.conn.in_transaction:
            await self.conn.rollback()

    async def setup(self) -> None:
        setup = super().setup
        await aretry_locked(setup, self.busy_timeout_s, on_retry=self._rollback)

    async def aput(self, *args: Any, **kwargs: Any):
        put = super().aput
        return await aretry_locked(
            lambda: put(*args, **kwargs), self.busy_timeout_s, on_retry=self._rollback
        )

    async def aput_writes(self, *args: Any, **kwargs: Any) -> None:
        put_writes = super().aput_writes
        await aretry_locked(
            lambda: put_writes(*args, **kwargs), self.busy_timeout_s, on_retry=self._rollback
        )

    async def adelete_thread(self, thread_id: str) -> None:
        delete = super().adelete_thread
        await aretry_locked(lambda: delete(thread_id), self.busy_timeout_s, on_retry=self._rollback)


@asynccontextmanager
async def open_checkpointer(
    path: str | Path, *, busy_timeout_s: float = BUSY_TIMEOUT_S
) -> AsyncIterator[SqliteCheckpointer]:
    """A checkpointer on the SQLite file at `path` (created with its folder if needed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    async with aiosqlite.connect(str(path), timeout=busy_timeout_s) as conn:
        saver = SqliteCheckpointer(conn)
        saver.busy_timeout_s = busy_timeout_s
        await saver.setup()
        yield saver
