"""What a build stage's output was made from, recorded beside it.

A rebuild resumes by reusing what an earlier run left in its folders: the data stage's traces
(``training.nano.data``), an extended tokenizer (``training.nano.extend``), an SFT checkpoint
(``training.nano.rebuild``). Each writes a small JSON record of its inputs beside its output,
and a later run reuses the output only when it would make it from the same inputs; otherwise it
refuses with what to do, so another run's output is never taken for this one's.
"""

from __future__ import annotations

import json
from pathlib import Path


def recorded(record: Path) -> dict | None:
    """The record at `record`; None when there is none (an older rebuild's output)."""
    return json.loads(record.read_text()) if record.exists() else None


def write_record(record: Path, made_from: dict) -> None:
    record.write_text(json.dumps(made_from) + "\n")
