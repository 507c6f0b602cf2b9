"""Pooled connections to PostgreSQL that outlive a dropped connection (langgraph#5675).

LangGraph users of `AsyncPostgresSaver` meet connections that the server, a pooler or the
network closed while they sat idle (``SSL connection has been closed unexpectedly``), and a
long-lived connection or pipeline makes that fatal. Here every operation takes a connection
from a pool and gives it back:

- a connection idle for longer than `IDLE_CHECK_S` is checked before it is handed out, and
  one that fails the check is replaced (psycopg_pool's ``check``); busy ones cost nothing;
- TCP keepalives and a user timeout find a silently dead peer;
- an operation that fails because its connection broke, or because none could be had (the
  server restarting), is tried again on a new connection for up to `RETRY_S`. Every
  operation retried is idempotent (upserts, absolute updates, reads).

After an outage has outlasted `RETRY_S` once, later operations try once and fail at once
until one succeeds, so that a process shutting down on a dead database does not wait again
for each call it makes on the way out.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg
import psycopg_pool

from graphs.store.postgres.url import DatabaseError, check_url, redact, scrub

log = logging.getLogger(__name__)
# The pool logs each failed reconnection as a warning; an outage is reported once, by the
# operation that gave up waiting for it (`Outage`), in the error the user sees.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)

_T = TypeVar("_T")
CONNECT_TIMEOUT_S = 10
RETRY_S = 30.0  # how long an operation waits for the database to come back
IDLE_CHECK_S = 5.0  # a connection idle longer than this is checked before use
CONNECTION_OPTIONS: dict[str, Any] = {
    "connect_timeout": CONNECT_TIMEOUT_S,
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
    "tcp_user_timeout": 60_000,  # ms unacknowledged before the link counts as dead
    "application_name": "paravt-graph",
}
# Failures of the link or the server, not of the statement: worth a new connection.
LINK_ERRORS = (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout)


def describe(exc: BaseException, url: str) -> str:
    """What went wrong, in one line without the password."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return scrub(text, url)


def connect_error(exc: BaseException, url: str) -> DatabaseError:
    """The user's message for a database that could not be opened."""
    reason = describe(exc, url)
    if "password authentication failed" in reason or "no password supplied" in reason:
        hint = "check the user and password in the URL"
    elif "does not exist" in reason:
        hint = "create the database first (createdb), or name one that exists"
    else:
        hint = "check that PostgreSQL runs there and accepts connections from this host"
    return DatabaseError(f"cannot open the database {redact(url)}: {reason} ({hint})")


def check_reachable(url: str) -> None:
    """Connect once, so that a wrong URL fails with the server's own reason (a pool would
    only time out), before anything is written."""
    check_url(url)
    try:
        psycopg.connect(url, **CONNECTION_OPTIONS).close()
    except psycopg.Error as exc:
        raise connect_error(exc, url) from exc


def _stamp(conn: Any) -> None:
    conn.paravt_returned_at = time.monotonic()


def _needs_check(conn: Any) -> bool:
    return time.monotonic() - getattr(conn, "paravt_returned_at", 0.0) > IDLE_CHECK_S


def _check(conn: psycopg.Connection) -> None:
    if _needs_check(conn):
        psycopg_pool.ConnectionPool.check_connection(conn)


def _reset(conn: psycopg.Connection) -> None:
    _stamp(conn)


async def _acheck(conn: psycopg.AsyncConnection) -> None:
    if _needs_check(conn):
        await psycopg_pool.AsyncConnectionPool.check_connection(conn)


async def _areset(conn: psycopg.AsyncConnection) -> None:
    _stamp(conn)


def open_pool(
    url: str, *, max_size: int = 4, retry_s: float = RETRY_S, **kwargs: Any
) -> psycopg_pool.ConnectionPool:
    """A pool of autocommit connections to ``url`` (checked reachable first); a connection
    is waited for at most ``retry_s``."""
    check_reachable(url)
    pool = psycopg_pool.ConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        open=False,
        check=_check,
        reset=_reset,
        kwargs={**CONNECTION_OPTIONS, "autocommit": True, **kwargs},
        timeout=retry_s,
        name="paravt-board",
    )
    pool.open(wait=False)
    return pool


async def open_async_pool(
    url: str, *, max_size: int = 2, retry_s: float = RETRY_S, **kwargs: Any
) -> psycopg_pool.AsyncConnectionPool:
    """The async form of `open_pool` (LangGraph's saver wants ``row_factory=dict_row``)."""
    check_url(url)
    try:
        await (await psycopg.AsyncConnection.connect(url, **CONNECTION_OPTIONS)).close()
    except psycopg.Error as exc:
        raise connect_error(exc, url) from exc
    pool = psycopg_pool.AsyncConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        open=False,
        check=_acheck,
        reset=_areset,
        kwargs={**CONNECTION_OPTIONS, "autocommit": True, **kwargs},
        timeout=retry_s,
        name="paravt-checkpoints",
    )
    await pool.open(wait=False)
    return pool


class Outage:
    """Retries of one pool's operations, and whether the database is known to be down."""

    def __init__(self, url: str, retry_s: float = RETRY_S) -> None:
        self.url, self.retry_s = url, retry_s
        self.down = False

    def _delays(self):
        """Jittered backoff (50 ms doubling to 2 s) within `retry_s`; none while known down."""
        if self.down:
            return
        deadline, delay = time.monotonic() + self.retry_s, 0.05
        while True:
            pause = delay * (0.5 + random.random())
            if time.monotonic() + pause > deadline:
                return
            yield pause
            delay = min(delay * 2, 2.0)

    def _failed(self, what: str, exc: BaseException) -> DatabaseError:
        self.down = True
        return DatabaseError(
            f"the database {redact(self.url)} failed {what} and did not come back within "
            f"{self.retry_s:g} s: {describe(exc, self.url)}"
        )

    def run(self, what: str, action: Callable[[], _T]) -> _T:
        """``action()``, tried again on a link failure until the database answers."""
        delays = self._delays()
        while True:
            try:
                result = action()
            except LINK_ERRORS as exc:
                pause = next(delays, None)
                if pause is None:
                    raise self._failed(what, exc) from exc
                log.info("database link failed during %s (%s); retrying", what, exc)
                time.sleep(pause)
                continue
            self.down = False
            return result

    async def arun(self, what: str, action: Callable[[], Awaitable[_T]]) -> _T:
        """The async form of `run`."""
        delays = self._delays()
        while True:
            try:
                result = await action()
            except LINK_ERRORS as exc:
                pause = next(delays, None)
                if pause is None:
                    raise self._failed(what, exc) from exc
                log.info("database link failed during %s (%s); retrying", what, exc)
                await asyncio.sleep(pause)
                continue
            self.down = False
            return result
