"""Per-sample JSONL (appended and flushed per sample) and atomically written JSON files."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evals.sample import Sample

SAMPLES_FILE = "samples.jsonl"


class SampleLog:
    """The append-only log of finished samples; the last line for an id wins.

    Each line is written and fsync'ed whole, so a run killed with `kill -9` leaves at
    most one torn final line, which `read` skips and the rerun redoes.
    """

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / SAMPLES_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(line)
            out.flush()
            os.fsync(out.fileno())

    def read(self) -> dict[str, dict[str, Any]]:
        """The latest record per sample id."""
        latest: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return latest
        with open(self.path, encoding="utf-8") as lines:
            for line in lines:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line torn by a crash; its sample is redone
                latest[record["sample_id"]] = record
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


def sample_to_json(sample: Sample) -> dict[str, Any]:
    data = asdict(sample)
    data["options"] = list(sample.options)
    return data


def sample_from_json(data: dict[str, Any]) -> Sample:
    return Sample(**{**data, "options": tuple(data.get("options", ()))})
