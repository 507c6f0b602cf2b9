"""Scoring for lvbench: per-item rules and the aggregate, by profile."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from agents.scoring.extract import extract_answer
from agents.scoring.letters import extract_letter
from evals.sample import Sample

PROFILES = ("official",)

#
# LVBench's reference scoring is an exact letter match over all items. Replies are read
# with this project's robust rule (agents.scoring.letters.robust_letter) on the answer text
# of the turn (agents.scoring.extract_answer), over the item's own option letters: it takes
# "B", "(B)", "The answer is (B).", "answer: b", "B) because ..." alike and gives "" (wrong)
# when no letter is found. Each item also counts toward each of its question types, which
# the aggregate reports under the leaderboard codes (the annotations spell them out).

TYPE_CODES = {
    "key information retrieval": "KIR",
    "event understanding": "EU",
    "summarization": "Sum",
    "entity recognition": "ER",
    "reasoning": "Rea",
    "temporal grounding": "TG",
}
"""Annotation question_type (lower-cased) -> leaderboard code; a code maps to itself."""
_CODES = {**TYPE_CODES, **{code.lower(): code for code in TYPE_CODES.values()}}


def type_code(name: str) -> str:
    """'key information retrieval' -> 'KIR'; an unknown name is kept as written."""
    return _CODES.get(name.strip().lower(), name.strip())


def score(response: str, sample: Sample, profile: str = "official") -> dict[str, float]:
    """``correct`` and ``extracted`` for one turn.

    >>> s = Sample("1", "", "q", "p", "multiple_choice", "D", ("A. 1", "B. 2", "C. 3", "D. 4"))
    >>> score("<think>The caption reads 1633.</think>\\nThe answer is (D).", s)
    {'score': 1.0, 'correct': 1.0, 'extracted': 1.0}
    """
    _check(profile)
    letters = "".join(option[0] for option in sample.options)
    letter = extract_letter(extract_answer(response), "robust", letters)
    correct = float(letter == sample.target)
    return {"score": correct, "correct": correct, "extracted": float(bool(letter))}


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = "official"
) -> dict[str, float]:
    """``accuracy`` over all items and ``acc/<code>`` per question type (NaN for no items).

    >>> s = [Sample(str(i), "", "q", "p", "multiple_choice", "A",
    ...             categories={"question_type": t})
    ...      for i, t in enumerate([["reasoning", "event understanding"], ["reasoning"]])]
    >>> aggregate(s, [{"correct": 1.0}, {"correct": 0.0}])
    {'accuracy': 0.5, 'acc/EU': 1.0, 'acc/Rea': 0.5}
    """
    _check(profile)
    if not metrics:
        return {"accuracy": math.nan}
    by_type: dict[str, list[float]] = {}
    for sample, item in zip(samples, metrics, strict=True):
        types = sample.categories.get("question_type") or []
        for name in [types] if isinstance(types, str) else types:
            by_type.setdefault(type_code(name), []).append(item["correct"])
    order = list(TYPE_CODES.values())
    codes = [c for c in order if c in by_type] + sorted(set(by_type) - set(order))
    return {
        "accuracy": sum(m["correct"] for m in metrics) / len(metrics),
        **{f"acc/{c}": sum(by_type[c]) / len(by_type[c]) for c in codes},
    }


def _check(profile: str) -> None:
    if profile not in PROFILES:
        raise ValueError(f"lvbench has no profile {profile!r}; known: official")
