"""Where the board and LangGraph's checkpoints live: SQLite files in the home folder (the
embedded default), or one PostgreSQL database when a URL is given (``PARAVT_DATABASE_URL``,
``--database-url``), for runs on many hosts. The PostgreSQL modules load only then."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from graphs.settings import Settings
from graphs.store.board import BoardStore
from graphs.store.checkpointer import open_checkpointer
from graphs.store.postgres.url import check_url, redact
from graphs.store.sqlite_board import Board


def board_location(settings: Settings) -> str:
    """Where the board is, as it may be shown (a URL without its password)."""
    return redact(settings.database_url) if settings.database_url else str(settings.board_path)


def open_board(settings: Settings, **options: Any) -> BoardStore:
    """The board these settings name (``options`` go to its constructor)."""
    if settings.database_url:
        from graphs.store.postgres.board import PostgresBoard

        options.setdefault("retry_s", settings.database_retry_s)
        return PostgresBoard(check_url(settings.database_url), **options)
    return Board(settings.board_path, **options)


@asynccontextmanager
async def open_checkpoints(settings: Settings) -> AsyncIterator[Any]:
    """LangGraph's checkpointer for these settings, for the life of the block."""
    if settings.database_url:
        from graphs.store.postgres.checkpointer import open_postgres_checkpointer

        url, retry_s = check_url(settings.database_url), settings.database_retry_s
        async with open_postgres_checkpointer(url, retry_s=retry_s) as saver:
            yield saver
    else:
        async with open_checkpointer(settings.checkpoint_path) as saver:
            yield saver
