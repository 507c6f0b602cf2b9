"""Who owns a running run, and whether that process still lives: host, boot, pid, start time.

A run is `running` only while its owner lives. A process that dies without finishing its
runs (`kill -9`, a crash, a power cut) leaves them `running` on the board; the next process
that opens the board tells them apart from live ones with `is_alive` and marks them
`interrupted` (`graphs.store.sqlite_board.Board.mark_stale_interrupted`).

SQLite in WAL mode serves processes of one host only, so every live owner of a run is a
process on this host; a pid alone is not enough, because pids are reused, so the owner is
also named by the boot and the process start time (Linux `/proc`). Elsewhere the start
time is unknown and a reused pid reads as alive, which errs on the safe side.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class Owner:
    """One process: where it runs and which process it is."""

    host: str
    boot: str  # the kernel's boot id; "" where unknown
    pid: int
    started: str  # start time in clock ticks since boot; "" where unknown

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Owner | None:
        """The owner stored on a run, or None for a run written before owners were kept."""
        if not text:
            return None
        try:
            data = json.loads(text)
            return cls(str(data["host"]), str(data["boot"]), int(data["pid"]), str(data["started"]))
        except (ValueError, KeyError, TypeError):
            return None


def current() -> Owner:
    """This process (recomputed after a fork: the pid is part of the key)."""
    return _owner_of(os.getpid())


@cache
def _owner_of(pid: int) -> Owner:
    stat = _proc_stat(pid)
    return Owner(socket.gethostname(), _boot_id(), pid, stat[1] if stat else "")


def is_alive(owner: Owner | None) -> bool | None:
    """True if the owner still runs, False if it has ended, None if it cannot be told
    (a process of another host). A run with no recorded owner is from an ended process."""
    if owner is None:
        return False
    if owner.host != socket.gethostname():
        return None
    boot = _boot_id()
    if owner.boot and boot and owner.boot != boot:
        return False  # the machine restarted since
    if not _pid_exists(owner.pid):
        return False
    stat = _proc_stat(owner.pid)
    if stat is None:
        return True  # no /proc: the pid exists, and may be a reused one
    state, started = stat
    return state != "Z" and not (owner.started and owner.started != started)  # Z: a zombie


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks after boot): fields 3 and 22 of /proc/<pid>/stat."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces or parentheses
    fields = stat.rsplit(")", 1)[-1].split()
    return (fields[0], fields[19]) if len(fields) > 19 else None


@cache
def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""
