"""Scoring for videomme: per-item rules and the aggregate, by profile."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from agents.scoring.extract import extract_answer
from agents.scoring.letters import videomme_lmms_eval, videomme_official
from evals.sample import Sample

LETTERS = "ABCD"

#
# Every scorer reads the answer text of the turn first (agents.scoring.extract_answer: the
# answer block, else the text after </think>, else the last line), then the profile's letter
# rule. The two references differ in their prefix lists and in the denominator:
#
# - official: VideoMME's ``extract_characters_regex`` (its glued prefix strings kept) and
#   accuracy over the items that gave a letter, as ``eval_your_results.py`` reports it
#   ("answered"; 0 when no item gave one, as that script prints).
# - lmms_eval: lmms-eval's pre-2026 rule (six prefixes, so "Answer: C" reads as A) and
#   accuracy over every item, an item without a letter counting wrong.

LETTER_RULES: dict[str, Callable[[str, str], str]] = {
    "official": videomme_official,
    "lmms_eval": videomme_lmms_eval,
}
"""Profile -> letter extraction over the answer text."""

ONLY_ANSWERED = {"official": True, "lmms_eval": False}
"""Profile -> whether accuracy divides by the items that gave a letter (else by all items)."""


def _profile_rule(profile: str) -> Callable[[str, str], str]:
    try:
        return LETTER_RULES[profile]
    except KeyError:
        known = ", ".join(LETTER_RULES)
        raise ValueError(f"videomme has no profile {profile!r}; known: {known}") from None


def score(response: str, sample: Sample, profile: str = "official") -> dict[str, float]:
    """``correct`` (1.0/0.0) and ``extracted`` (a letter was found) for one whole turn.

    >>> s = Sample("001-1", "", "q", "p", "multiple_choice", "C")
    >>> score("<think>B or C?</think><answer>C</answer>", s)
    {'score': 1.0, 'correct': 1.0, 'extracted': 1.0}
    >>> score("Answer: C", s)["correct"], score("Answer: C", s, "lmms_eval")["correct"]
    (1.0, 0.0)
    """
    letter = _profile_rule(profile)(extract_answer(response), LETTERS)
    correct = float(letter == sample.target)
    return {"score": correct, "correct": correct, "extracted": float(bool(letter))}


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = "official"
) -> dict[str, float]:
    """``accuracy`` under the profile's denominator, and ``answered`` (share with a letter).

    With no items at all both are NaN (nothing to judge).

    >>> s = Sample("001-1", "", "q", "p", "multiple_choice", "C")
    >>> m = [score("C", s), score("I cannot tell from these frames.", s)]
    >>> aggregate([s, s], m)["accuracy"], aggregate([s, s], m, "lmms_eval")["accuracy"]
    (1.0, 0.5)
    """
    _profile_rule(profile)
    n = len(metrics)
    if n == 0:
        return {"accuracy": math.nan, "answered": math.nan}
    correct = sum(m["correct"] for m in metrics)
    answered = sum(m["extracted"] for m in metrics)
    denominator = answered if ONLY_ANSWERED[profile] else n
    accuracy = correct / denominator if denominator else 0.0
    return {"accuracy": accuracy, "answered": answered / n}
