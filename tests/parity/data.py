"""Read the committed parity data: the corpus and each reference's outputs."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "parity"


@cache
def reference(name: str) -> dict:
    """One reference's document (``tests/data/parity/<name>.json``), replies filled in."""
    document = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    replies = corpus_replies()
    for item in document.get("items", []):
        item.setdefault("reply", replies.get(item["id"]))
    return document


@cache
def corpus() -> dict:
    return json.loads((DATA / "corpus.json").read_text(encoding="utf-8"))


@cache
def corpus_replies() -> dict[str, str]:
    return {item["id"]: item["reply"] for family in corpus().values() for item in family}


def disagreements(pairs) -> list:
    """The (id, ours, reference) triples that differ, for a readable assertion message."""
    return [(key, ours, theirs) for key, ours, theirs in pairs if ours != theirs]
