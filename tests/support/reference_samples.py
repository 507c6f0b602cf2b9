"""Samples made from the docs the reference harnesses scored (tests/data/parity)."""

from __future__ import annotations

from evals.sample import Sample

VIDEOMME_FIELDS = ("duration", "domain", "sub_category", "task_type")


def videomme_sample(doc: dict) -> Sample:
    return Sample(
        doc["question_id"],
        "",
        "q",
        "p",
        "multiple_choice",
        doc["answer"],
        tuple(f"{x}. o" for x in "ABCD"),
        doc["videoID"],
        {f: doc[f] for f in VIDEOMME_FIELDS},
    )
