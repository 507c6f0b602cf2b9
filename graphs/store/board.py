"""What every board does the same way, whichever database keeps it: notes, run statuses, owners.

Two boards share this interface: `graphs.store.sqlite_board.Board` (one SQLite file, the embedded
default) and `graphs.store.postgres.board.PostgresBoard` (PostgreSQL, for many hosts). Nodes,
runners and the CLI take either (`BoardStore`); `graphs.store.stores.open_board` picks one.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from graphs.store import owners

log = logging.getLogger(__name__)

_T = TypeVar("_T")
RUN_STATUSES = ("running", "answered", "no_answer", "failed", "interrupted")


class BoardSchemaTooNew(ValueError):
    """The board was written by a newer version of paravt-graph; nothing was changed."""


@dataclass(frozen=True)
class Note:
    """One sub-agent's finding about a window, with its provenance and cost."""

    run_id: str
    key: str  # unique within a run, e.g. "t0c2": turn 0, call 2
    author: str
    turn: int
    call_index: int
    start: float
    end: float
    frames: list[float]  # timestamps of the frames the note was made from
    content: str
    verdict: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    created_at: float = field(default_factory=time.time)


NOTE_COLUMNS = tuple(Note.__dataclass_fields__)


def too_new(where: str, found: int, known: int) -> BoardSchemaTooNew:
    return BoardSchemaTooNew(
        f"the board {where} has schema version {found}, written by a newer paravt-graph "
        f"(this one knows up to {known}); upgrade paravt-graph to use it. Nothing was changed."
    )


def check_final(status: str) -> None:
    if status not in RUN_STATUSES or status == "running":
        raise ValueError(f"release_run status must be a final run status, got {status!r}")


def note_from_row(row: dict[str, Any]) -> Note:
    return Note(**{**row, "frames": json.loads(row["frames"])})


def decode_run(row: dict[str, Any]) -> dict[str, Any]:
    decoded = {"settings": json.loads(row["settings"] or "{}")}
    return {**row, **decoded, "source": json.loads(row.get("source") or "{}")}


def ended_message(owner: owners.Owner | None) -> str:
    if owner is None:
        return "interrupted: the process that ran it ended without finishing it"
    return (
        f"interrupted: its process (pid {owner.pid} on {owner.host}) ended without "
        "finishing it; rerun with the same thread id to resume"
    )


class BoardStore:
    """The board's interface, and what its two stores share: telling live runs from stale.

    A store provides the writes and reads below; `_running_owners` lists the `running`
    runs with their owner (and whatever tells a remote owner's liveness), `_remote_alive`
    decides a run whose owner is on another host.
    """

    where: str  # the board's file or redacted URL, for messages

    # Writes: every one idempotent.
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
        """Register a run owned by this process; a resumed run keeps its start time and notes.
        `source` says where the question came from (an evaluation harness's task and doc id)."""
        raise NotImplementedError

    def claim_run(self, run_id: str) -> bool:
        """Mark a registered run `running` and owned by this process (a resumed run);
        False when the board has no such run."""
        raise NotImplementedError

    def release_run(self, run_id: str, *, status: str = "interrupted", error: str) -> bool:
        """End a run that stopped before finishing (cancelled, or an unexpected error), if it
        is still `running`; False when it is not (already finished, or not registered)."""
        raise NotImplementedError

    def finish_run(
        self,
        run_id: str,
        *,
        status: str,
        answer: str | None = None,
        error: str | None = None,
        trace: dict[str, Any] | None = None,
    ) -> None:
        """End a run, with its trace, in one transaction; ValueError if it is not registered."""
        raise NotImplementedError

    def add_note(self, note: Note) -> bool:
        """Write a note once; returns False when (run_id, key) is already on the board."""
        raise NotImplementedError

    def set_verdict(self, run_id: str, key: str, verdict: str) -> None:
        raise NotImplementedError

    # Reads.
    def notes(self, run_id: str) -> list[Note]:
        """A run's notes in the order they were asked for (turn, then call index)."""
        raise NotImplementedError

    def run(self, run_id: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest runs first."""
        raise NotImplementedError

    def trace(self, run_id: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def traces(self) -> Iterator[dict[str, Any]]:
        """Every stored trace, oldest first."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def at_once(
        self, method: Callable[..., _T], /, *args: Any, **kwargs: Any
    ) -> tuple[bool, _T | None]:
        """``(True, method(*args, **kwargs))`` if this board's call can run now without
        waiting, else ``(False, None)`` and nothing was written (`graphs.runs.offload`). A store
        across a network always waits: its calls go to a thread."""
        return False, None

    # Owners.
    def _running_owners(self) -> list[dict[str, Any]]:
        """``run_id`` and ``owner`` (and store-specific liveness) of every running run."""
        raise NotImplementedError

    def _remote_alive(self, row: dict[str, Any]) -> bool:
        """Whether a running run owned on another host still lives (SQLite cannot tell: yes)."""
        return True

    def _owner_alive(self, row: dict[str, Any]) -> bool:
        alive = owners.is_alive(owners.Owner.from_json(row.get("owner")))
        return self._remote_alive(row) if alive is None else alive

    def run_is_live(self, run_id: str) -> bool:
        """Whether the run is `running` under an owner that still lives (one on another host
        counts as live while the store cannot tell otherwise)."""
        run = self.run(run_id)
        return run is not None and run["status"] == "running" and self._owner_alive(run)

    def mark_stale_interrupted(self) -> list[str]:
        """Mark `interrupted` every `running` run whose owner has ended (runs with no
        recorded owner too); returns their ids. Runs of live owners are left alone."""
        stale = []
        for row in self._running_owners():
            if not self._owner_alive(row):
                stale.append((row["run_id"], self._stale_message(row)))
        for run_id, message in stale:
            self.release_run(run_id, status="interrupted", error=message)
        if stale:
            log.info("%s: marked %d stale runs interrupted", self.where, len(stale))
        return [run_id for run_id, _ in stale]

    def _stale_message(self, row: dict[str, Any]) -> str:
        return ended_message(owners.Owner.from_json(row.get("owner")))
