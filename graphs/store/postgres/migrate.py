"""`app.py board migrate --to URL`: copy a SQLite home (board and checkpoints) to PostgreSQL.

Rows already in the database are left as they are and not counted, so a second migration
of the same home copies nothing, and one stopped halfway is finished by running it again.
The board's rows go in one transaction. Checkpoints go through LangGraph's own saver (its
tables split a checkpoint into a row and one blob per channel), each skipped when its id
is there; pending writes are copied as stored (their serialised bytes are the same in
both savers), each skipped when its key is there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphs.store.checkpointer import saved
from graphs.store.postgres.board import PostgresBoard
from graphs.store.postgres.checkpointer import open_postgres_checkpointer
from graphs.store.sqlite_board import Board

_BOARD_SQL = {
    "runs": (
        "INSERT INTO paravt_runs (run_id, thread_id, video, question, settings, status, answer, "
        "error, started_at, finished_at, owner, source) VALUES (%(run_id)s, %(thread_id)s, "
        "%(video)s, %(question)s, %(settings)s, %(status)s, %(answer)s, %(error)s, "
        "%(started_at)s, %(finished_at)s, %(owner)s, %(source)s) ON CONFLICT DO NOTHING"
    ),
    "notes": (
        'INSERT INTO paravt_notes (run_id, key, author, turn, call_index, "start", "end", '
        "frames, content, verdict, prompt_tokens, completion_tokens, latency_s, created_at) "
        "VALUES (%(run_id)s, %(key)s, %(author)s, %(turn)s, %(call_index)s, %(start)s, "
        "%(end)s, %(frames)s, %(content)s, %(verdict)s, %(prompt_tokens)s, "
        "%(completion_tokens)s, %(latency_s)s, %(created_at)s) ON CONFLICT DO NOTHING"
    ),
    "traces": (
        "INSERT INTO paravt_traces (run_id, trace, written_at) VALUES (%(run_id)s, "
        "%(trace)s, %(written_at)s) ON CONFLICT DO NOTHING"
    ),
}
_WRITES_SQL = (
    "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, "
    "task_path, idx, channel, type, blob) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
    "ON CONFLICT DO NOTHING"
)


@dataclass
class Migration:
    """What one migration copied (rows already there are not counted) and what it found."""

    copied: dict[str, int] = field(default_factory=dict)
    found: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        return ", ".join(f"{self.copied[k]} of {self.found[k]} {k}" for k in self.found)


def copy_board(source: Board, target: PostgresBoard, migration: Migration) -> None:
    """The SQLite board's rows into the PostgreSQL board, in one transaction."""
    rows = source.dump()
    with target.connection() as conn, conn.transaction(), conn.cursor() as cursor:
        for table, sql in _BOARD_SQL.items():
            copied = 0
            for row in rows[table]:
                copied += cursor.execute(sql, {"owner": None, "source": None, **row}).rowcount
            migration.copied[table], migration.found[table] = copied, len(rows[table])


async def copy_checkpoints(path: Path, url: str, migration: Migration) -> None:
    """The SQLite file's checkpoints and pending writes into PostgreSQL."""
    checkpoints, writes = saved(path) if path.exists() else ([], [])
    copied = 0
    async with open_postgres_checkpointer(url) as saver:
        async with saver.conn.connection() as conn:
            cursor = await conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints"
            )
            there = {(r["thread_id"], r["checkpoint_ns"], r["checkpoint_id"]) async for r in cursor}
        for saved_tuple in reversed(checkpoints):  # oldest first
            configurable = saved_tuple.config["configurable"]
            key = (
                configurable["thread_id"],
                configurable.get("checkpoint_ns", ""),
                configurable["checkpoint_id"],
            )
            if key in there:
                continue
            parent = (saved_tuple.parent_config or {}).get("configurable", {})
            config: dict[str, Any] = {
                "configurable": {
                    "thread_id": key[0],
                    "checkpoint_ns": key[1],
                    "checkpoint_id": parent.get("checkpoint_id"),
                }
            }
            checkpoint = saved_tuple.checkpoint
            await saver.aput(
                config, checkpoint, saved_tuple.metadata, dict(checkpoint["channel_versions"])
            )
            copied += 1
        async with saver.conn.connection() as conn, conn.transaction(), conn.cursor() as cursor:
            added = 0
            for row in writes:
                await cursor.execute(_WRITES_SQL, row)
                added += cursor.rowcount
    migration.copied["checkpoints"], migration.found["checkpoints"] = copied, len(checkpoints)
    migration.copied["pending writes"], migration.found["pending writes"] = added, len(writes)


async def migrate_home(board_path: Path, checkpoint_path: Path, url: str) -> Migration:
    """Copy the board file and the checkpoint file at these paths into the database."""
    if not board_path.exists():
        raise FileNotFoundError(2, "no board to migrate", str(board_path))
    target = PostgresBoard(url, mark_stale=False)  # checked reachable first: nothing written
    source = Board(board_path)
    migration = Migration()
    try:
        copy_board(source, target, migration)
        await copy_checkpoints(checkpoint_path, url, migration)
    finally:
        source.close()
        target.close()
    return migration
