"""LangGraph's checkpoints in PostgreSQL: its own `AsyncPostgresSaver`, on a pool, retried.

The saver is LangGraph's, with its schema and statements, so a LangGraph server or another
tool reads the same threads. Two things are added around it:

- every operation runs on a pooled connection and is tried again on a new one when the
  link drops (`graphs.store.postgres.pool`; langgraph#5675); all of them are idempotent: puts
  are upserts, writes are inserted once per (task, index);
- setup (LangGraph's migrations) runs under a session advisory lock, so that processes
  opening a new database at once do not race on its ``checkpoint_migrations`` rows, and
  is skipped when the database is already at this version; a database migrated by a newer
  langgraph-checkpoint-postgres is refused rather than written to.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import dict_row

from graphs.store.postgres.pool import (
    CONNECTION_OPTIONS,
    RETRY_S,
    Outage,
    connect_error,
    open_async_pool,
)
from graphs.store.postgres.url import DatabaseError, check_url, redact

_LOCK_KEY = 0x70617261_7663  # the advisory lock of checkpoint setup


class PostgresCheckpointer(AsyncPostgresSaver):
    """`AsyncPostgresSaver` on a pool, each operation retried when its connection drops."""

    def __init__(self, pool: Any, url: str, *, retry_s: float = RETRY_S) -> None:
        super().__init__(pool)
        self._outage = Outage(url, retry_s)

    async def aget_tuple(self, config):
        get = super().aget_tuple
        return await self._outage.arun("reading a checkpoint", lambda: get(config))

    async def alist(self, config, *, filter=None, before=None, limit=None) -> AsyncIterator:
        listed = super().alist

        async def collect() -> list:
            return [c async for c in listed(config, filter=filter, before=before, limit=limit)]

        for row in await self._outage.arun("listing checkpoints", collect):
            yield row

    async def aput(self, config, checkpoint, metadata, new_versions):
        put = super().aput
        return await self._outage.arun(
            "writing a checkpoint", lambda: put(config, checkpoint, metadata, new_versions)
        )

    async def aput_writes(self, config, writes, task_id, task_path: str = "") -> None:
        put_writes = super().aput_writes
        await self._outage.arun(
            "writing a task's writes", lambda: put_writes(config, writes, task_id, task_path)
        )

    async def adelete_thread(self, thread_id: str) -> None:
        delete = super().adelete_thread
        await self._outage.arun("deleting a thread", lambda: delete(thread_id))

    async def aget_delta_channel_history(
        self, *, config, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        history = super().aget_delta_channel_history
        return await self._outage.arun(
            "reading channel history", lambda: history(config=config, channels=channels)
        )


async def _version(conn: psycopg.AsyncConnection) -> int | None:
    cursor = await conn.execute("SELECT to_regclass('checkpoint_migrations') AS t")
    if (await cursor.fetchone())["t"] is None:
        return None
    cursor = await conn.execute("SELECT max(v) AS v FROM checkpoint_migrations")
    return (await cursor.fetchone())["v"]


async def _lock(conn: psycopg.AsyncConnection) -> None:
    """Take the setup lock, polling: a session blocked inside ``pg_advisory_lock`` keeps a
    statement open, and LangGraph's ``CREATE INDEX CONCURRENTLY`` in the session holding
    the lock waits for every open statement: a deadlock."""
    while True:
        cursor = await conn.execute("SELECT pg_try_advisory_lock(%s) AS taken", [_LOCK_KEY])
        if (await cursor.fetchone())["taken"]:
            return
        await asyncio.sleep(0.05)


async def setup_schema(url: str) -> None:
    """LangGraph's migrations, once, under a lock; refuses a newer schema."""
    latest = len(AsyncPostgresSaver.MIGRATIONS) - 1
    try:
        conn = await psycopg.AsyncConnection.connect(
            url, autocommit=True, row_factory=dict_row, **CONNECTION_OPTIONS
        )
    except psycopg.Error as exc:
        raise connect_error(exc, url) from exc
    async with conn:
        found = await _version(conn)
        if found == latest:
            return
        await _lock(conn)
        try:
            found = await _version(conn)
            if found is not None and found > latest:
                raise DatabaseError(
                    f"the checkpoints in {redact(url)} were migrated by a newer "
                    f"langgraph-checkpoint-postgres (migration {found}; this one knows up to "
                    f"{latest}); upgrade it to use them. Nothing was changed."
                )
            if found != latest:
                await AsyncPostgresSaver(conn).setup()
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])


@asynccontextmanager
async def open_postgres_checkpointer(
    url: str, *, retry_s: float = RETRY_S, max_connections: int = 2
) -> AsyncIterator[PostgresCheckpointer]:
    """A checkpointer on the database at ``url`` (its tables set up if needed)."""
    check_url(url)
    await setup_schema(url)
    pool = await open_async_pool(
        url, max_size=max_connections, retry_s=retry_s, row_factory=dict_row, prepare_threshold=0
    )
    try:
        yield PostgresCheckpointer(pool, url, retry_s=retry_s)
    finally:
        await pool.close()
