"""Per-sample JSONL (appended and flushed per sample) and atomically written JSON files."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evals.sample import Sample

log = logging.getLogger(__name__)

SAMPLES_FILE = "samples.jsonl"
TORN_FILE = "samples.torn"  # torn tails moved aside by `repair`, kept for inspection


class SampleLog:
    """The append-only log of finished samples; the last line for an id wins.

    Each line is written and fsync'ed whole, so a crash leaves at most one torn final
    line: a last line with no newline. `read` never counts it, so its sample is missing
    until it is redone; `repair` (run before the first append) moves it to `samples.torn`,
    so the next line never glues onto it.
    """

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / SAMPLES_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._repaired = False

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock:
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
        """The latest record per sample id; a torn last line (no newline) counts for none."""
        latest: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return latest
        bad = 0
        with open(self.path, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if not line.endswith("\n"):
                    break  # torn by a crash mid-write: the sample is missing until redone
                try:
                    record = json.loads(line)
                    latest[record["sample_id"]] = record
                except (json.JSONDecodeError, KeyError, TypeError):
                    bad += 1  # e.g. a line an older version glued onto a torn one
        if bad:
            log.warning("%s has %d unreadable lines; their samples are run again", self.path, bad)
        return latest

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.read().values())


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write JSON through a temporary file and a rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, ensure_ascii=False, default=str)
            out.write("\n")
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


def sample_to_json(sample: Sample) -> dict[str, Any]:
    data = asdict(sample)
    data["options"] = list(sample.options)
    return data


def sample_from_json(data: dict[str, Any]) -> Sample:
    return Sample(**{**data, "options": tuple(data.get("options", ()))})
