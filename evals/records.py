"""Per-sample JSONL (appended and flushed per sample) and atomically written JSON files.

A log can be damaged by hand or by tools: a line that is not a record, a record without what
scoring needs, or two records of one sample with different replies (two runs merged, say).
None of them is ever read as a result: each is named in a warning; the run that writes the
log moves them to `samples.rejected.jsonl` (`SampleLog.set_aside`) and runs their samples
again, and a reader (rescore, compare) skips them. Of two different replies, neither is
chosen.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evals.sample import Sample
from graphs.store.errors import translated

log = logging.getLogger(__name__)

SAMPLES_FILE = "samples.jsonl"
TORN_FILE = "samples.torn"  # torn tails moved aside by `repair`, kept for inspection
REJECTED_FILE = "samples.rejected.jsonl"  # damaged and conflicting lines, set aside

#: What a record of each status needs to be reported, or resumed from, as it was scored.
RECORD_FIELDS = {"ok": ("doc_id", "sample", "resps", "metrics"), "error": ("doc_id", "error")}
#: What a record needs to be scored again: its metrics are what rescoring replaces.
REPLY_FIELDS = {**RECORD_FIELDS, "ok": ("doc_id", "sample", "resps")}


def record_problem(
    record: dict[str, Any], needs: dict[str, tuple[str, ...]] = RECORD_FIELDS
) -> str | None:
    """Why an eval record cannot be used as it is, or None.

    >>> record_problem({"sample_id": "s1", "status": "ok", "sample": {}, "resps": ["A"]})
    'no doc_id, metrics'
    """
    status = record.get("status")
    if status not in needs:
        return f"status {status!r} is not ok or error"
    missing = [name for name in needs[status] if name not in record]
    if missing:
        return f"no {', '.join(missing)}"
    if not isinstance(record["doc_id"], int) or isinstance(record["doc_id"], bool):
        return f"doc_id {record['doc_id']!r} is not a whole number"
    if status == "ok" and not (
        isinstance(record["resps"], list) and record["resps"] and isinstance(record["sample"], dict)
    ):
        return "no reply in resps, or no sample"
    return None


def reply_problem(record: dict[str, Any]) -> str | None:
    """Why a record cannot be scored again (rescore), or None: no metrics needed.

    >>> reply_problem({"doc_id": 0, "status": "ok", "sample": {}, "resps": ["A"]}) is None
    True
    """
    return record_problem(record, REPLY_FIELDS)


@dataclass(frozen=True)
class BadLine:
    """A line of the log that is not read as a result, and why."""

    number: int  # 1-based
    reason: str
    sample_id: str | None
    text: str

    def __str__(self) -> str:
        of = f" (sample {self.sample_id})" if self.sample_id else ""
        return f"line {self.number}{of}: {self.reason}"


class SampleLog:
    """The append-only log of finished samples; the last line for an id wins, unless two
    finished lines of one id disagree on the reply (then neither counts).

    Each line is written and fsync'ed whole, so a crash leaves at most one torn final
    line: a last line with no newline. `read` never counts it, so its sample is missing
    until it is redone; `repair` (run before the first append) moves it to `samples.torn`,
    so the next line never glues onto it. ``check`` names what else makes a record unusable
    (`record_problem` for an eval's log).
    """

    def __init__(
        self, folder: str | Path, *, check: Callable[[dict[str, Any]], str | None] | None = None
    ):
        self.path = Path(folder) / SAMPLES_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.check = check
        self._lock = threading.Lock()
        self._repaired = False

    def append(self, record: dict[str, Any]) -> None:
        """Write one record whole (a full disk is `graphs.store.errors.DiskFull`)."""
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock, translated(self.path, "samples log"):
            if not self._repaired:
                self._repair()
            with open(self.path, "a", encoding="utf-8") as out:
                out.write(line)
                out.flush()
                os.fsync(out.fileno())

    def repair(self) -> int:
        """Cut a torn last line off the log (into samples.torn); returns its length in bytes.
        Only the process that writes the log may call it."""
        with self._lock:
            return self._repair()

    def _repair(self) -> int:
        self._repaired = True
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return 0
        if not data or data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        torn = data[keep:]
        with open(self.path.parent / TORN_FILE, "ab") as aside:
            aside.write(torn + b"\n")
            aside.flush()
            os.fsync(aside.fileno())
        with open(self.path, "r+b") as f:
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())
        log.warning(
            "%s ended in a torn line (%d bytes, moved to %s); its sample is run again",
            self.path,
            len(torn),
            TORN_FILE,
        )
        return len(torn)

    def read(self) -> dict[str, dict[str, Any]]:
        """The latest record per sample id; a torn last line (no newline) counts for none,
        and lines that are damaged or disagree are named in a warning and count for none."""
        latest, bad = self.scan()
        if bad:
            log.warning(
                "%s: %s not read (%s); `eval run` with the same options sets them aside in "
                "%s and runs their samples again",
                self.path,
                _lines(len(bad)),
                "; ".join(map(str, bad)),
                REJECTED_FILE,
            )
        return latest

    def scan(self) -> tuple[dict[str, dict[str, Any]], list[BadLine]]:
        """(the latest usable record per sample id, the lines that are not used and why)."""
        latest: dict[str, dict[str, Any]] = {}
        lines: dict[str, list[tuple[int, str, dict[str, Any]]]] = {}
        bad: list[BadLine] = []
        if not self.path.exists():
            return latest, bad
        with open(self.path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if not line.endswith("\n"):
                    break  # torn by a crash mid-write: the sample is missing until redone
                if not line.strip():
                    continue
                record, reason = _parsed(line, self.check)
                sid = record.get("sample_id") if isinstance(record, dict) else None
                if reason:
                    bad.append(BadLine(number, reason, sid if isinstance(sid, str) else None, line))
                    continue
                latest[sid] = record
                lines.setdefault(sid, []).append((number, line, record))
        for sid, seen in lines.items():
            replies = {json.dumps(r.get("resps")) for _, _, r in seen if r.get("status") == "ok"}
            if len(replies) > 1:  # which reply is the result cannot be told: neither is
                numbers = ", ".join(str(n) for n, _, _ in seen)
                reason = f"{len(replies)} different replies on lines {numbers}"
                bad += [BadLine(n, reason, sid, line) for n, line, _ in seen]
                del latest[sid]
        return latest, sorted(bad, key=lambda b: b.number)

    def set_aside(self) -> list[BadLine]:
        """Move the lines `scan` does not use to samples.rejected.jsonl (each with its line
        number and reason) and rewrite the log without them, so that their samples run
        again; returns them. Only the process that writes the log may call it."""
        with self._lock:
            _, bad = self.scan()
            if not bad:
                return []
            drop = {b.number for b in bad}
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                kept = [line for n, line in enumerate(handle, 1) if n not in drop]
            with open(self.path.parent / REJECTED_FILE, "a", encoding="utf-8") as aside:
                for b in bad:
                    entry = {"line": b.number, "reason": b.reason, "text": b.text.rstrip("\n")}
                    aside.write(json.dumps(entry, ensure_ascii=False) + "\n")
                aside.flush()
                os.fsync(aside.fileno())
            _write_atomic(self.path, "".join(kept))
        log.warning(
            "%s: %s set aside in %s, and their samples run again: %s",
            self.path,
            _lines(len(bad)),
            REJECTED_FILE,
            "; ".join(map(str, bad)),
        )
        return bad

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.read().values())


def _lines(count: int) -> str:
    return f"{count} line is" if count == 1 else f"{count} lines are"


def _parsed(line: str, check) -> tuple[Any, str | None]:
    """(the line's record, why it cannot be used or None)."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg})"
    if not isinstance(record, dict) or not isinstance(record.get("sample_id"), str):
        return record, "not a record with a sample_id"
    return record, check(record) if check else None


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_jsonl_atomic(path: str | Path, records: list[dict[str, Any]]) -> None:
    """Write records as JSONL lines through a temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write JSON through a temporary file and a rename: readers never see half a file (a
    full disk is `graphs.store.errors.DiskFull`)."""
    path = Path(path)
    with translated(path, "results"):
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
        _write_atomic(path, text)


def sample_to_json(sample: Sample) -> dict[str, Any]:
    data = asdict(sample)
    data["options"] = list(sample.options)
    return data


def sample_from_json(data: dict[str, Any]) -> Sample:
    return Sample(**{**data, "options": tuple(data.get("options", ()))})
