"""What a damaged or full database file means to a user: one message that names the file, or
the disk, and what to do about it.

SQLite says "file is not a database" for a board that is not one and "database or disk is
full" when a write finds no space; both come from deep inside a run or a command. They are
recognised here (`damaged_store`, `full_disk`) and turned into errors whose message a user
can act on (`StoreDamaged`, `DiskFull`).
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path


class StoreDamaged(RuntimeError):
    """A database file cannot be read as one; the message says how to move it aside."""


class DiskFull(RuntimeError):
    """A write found no space left on the disk; the message names the disk."""

    def __init__(
        self, path: str | Path, todo: str = "free some space there and run the command again"
    ):
        self.path = Path(path)
        self.space = _space(self.path)
        super().__init__(f"no space left on the disk holding {path} ({self.space}): {todo}")


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen and len(seen) < 20:
        seen.append(exc)
        yield exc
        exc = exc.__cause__ or exc.__context__
        if isinstance(exc, BaseExceptionGroup):
            exc = exc.exceptions[0]


def full_disk(exc: BaseException | None, path: str | Path | None = None) -> bool:
    """Whether `exc` (or what caused it) is a write that found the disk full; with `path`,
    also SQLite's "disk I/O error" when the disk holding `path` has no space left (growing
    a WAL index on a full disk fails that way)."""
    for cause in _chain(exc):
        if isinstance(cause, DiskFull):
            return True
        if isinstance(cause, sqlite3.Error) and (
            getattr(cause, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
            or "disk is full" in str(cause)
        ):
            return True
        if isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        code = getattr(cause, "sqlite_errorcode", None)
        if path is not None and code is not None and code & 0xFF == sqlite3.SQLITE_IOERR:
            return _free_bytes(Path(path)) < _ALMOST_FULL
    return False


_ALMOST_FULL = 1 << 20  # less than this free: a failed write was out of space


def _free_bytes(path: Path) -> float:
    for place in (path, *path.parents):
        try:
            return shutil.disk_usage(place).free
        except OSError:
            continue
    return float("inf")


def damaged_store(exc: BaseException | None) -> bool:
    """Whether `exc` says a file is not a (readable) SQLite database."""
    codes = (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT)
    for cause in _chain(exc):
        if isinstance(cause, sqlite3.DatabaseError) and (
            getattr(cause, "sqlite_errorcode", None) in codes
            or "not a database" in str(cause)
            or "malformed" in str(cause)
        ):
            return True
    return False


def disk_full(path: str | Path, exc: BaseException | None = None) -> DiskFull:
    """The error to raise for a write to ``path`` that found no space."""
    if isinstance(exc, DiskFull):
        return exc
    return DiskFull(Path(path))


def damaged(path: str | Path, what: str, exc: BaseException) -> StoreDamaged:
    """The error to raise for a ``what`` file (board, checkpoints) SQLite cannot read."""
    path = Path(path)
    return StoreDamaged(
        f"the {what} file {path} is damaged or not a SQLite database ({exc}). Move it "
        f"aside and run again: `mv {path} {path}.damaged` (a new, empty {what} is made; "
        "the old file stays for inspection)"
    )


@contextlib.contextmanager
def translated(path: str | Path, what: str) -> Iterator[None]:
    """Turn SQLite's damaged-file and full-disk errors inside the block into messages."""
    try:
        yield
    except (sqlite3.DatabaseError, OSError) as exc:
        if full_disk(exc, path):
            raise disk_full(path, exc) from exc
        if damaged_store(exc):
            raise damaged(path, what, exc) from exc
        raise


def _space(path: Path) -> str:
    """How full the disk holding ``path`` is, in words."""
    for place in (path, *path.parents):
        try:
            usage = shutil.disk_usage(place)
        except OSError:
            continue
        return f"{usage.free / 1e6:.1f} MB free of {usage.total / 1e6:.1f} MB"
    return "its free space unknown"
