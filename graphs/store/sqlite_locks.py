"""Retrying SQLite work that another process holds a lock on, where SQLite does not wait.

SQLite's busy timeout makes a writer wait for another's write lock, but some conflicts fail
at once with "database is locked" whatever the timeout: switching a new file to WAL while
another process opens it, or a transaction that read an older snapshot and then writes.
These helpers retry the whole unit of work with jittered backoff until a deadline.
"""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

log = logging.getLogger(__name__)

BUSY_TIMEOUT_S = 30.0  # how long a writer waits for another process's lock, in all
_T = TypeVar("_T")


def is_locked(exc: BaseException) -> bool:
    """A lock conflict with another connection ("database is locked", "... table is locked")."""
    return isinstance(exc, sqlite3.OperationalError) and "is locked" in str(exc)


def _delays(timeout_s: float):
    """Jittered exponential delays (5 ms doubling to 250 ms) whose sum stays under timeout_s."""
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        pause = delay * (0.5 + random.random())
        if time.monotonic() + pause > deadline:
            return
        yield pause
        delay = min(delay * 2, 0.25)


def retry_locked(action: Callable[[], _T], timeout_s: float = BUSY_TIMEOUT_S) -> _T:
    """`action()`, retried while it fails on a lock conflict, for up to `timeout_s`."""
    delays = _delays(timeout_s)
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            pause = next(delays, None) if is_locked(exc) else None
            if pause is None:
                raise
            log.debug("sqlite locked (%s); retrying in %.3fs", exc, pause)
        time.sleep(pause)


async def aretry_locked(
    action: Callable[[], Awaitable[_T]],
    timeout_s: float = BUSY_TIMEOUT_S,
    *,
    on_retry: Callable[[], Awaitable[object]] | None = None,
) -> _T:
    """The async form: awaits `action()` again (after `on_retry()`, e.g. a rollback)."""
    delays = _delays(timeout_s)
    while True:
        try:
            return await action()
        except sqlite3.OperationalError as exc:
            pause = next(delays, None) if is_locked(exc) else None
            if pause is None:
                raise
            log.debug("sqlite locked (%s); retrying in %.3fs", exc, pause)
        if on_retry is not None:
            await on_retry()
        await asyncio.sleep(pause)
