"""Scoring for mmvu: per-item rules and the aggregate, by profile."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from agents.scoring.extract import extract_answer
from agents.scoring.letters import extract_letter
from agents.scoring.text import token_f1
from evals.sample import Sample

PROFILES = ("official",)

#
# MMVU's official evaluation has a model judge read every reply (both kinds), which is not
# available here, so this module scores without one and labels what it reports:
#
# - multiple choice: the letter of the answer text of the turn (agents.scoring.extract_answer)
#   by this project's robust rule (agents.scoring.letters.robust_letter) over the item's
#   option letters, compared with the gold letter: ``mc_accuracy``. On replies that state
#   a letter this is what the judge decides; it is not the official number.
# - open-ended: SQuAD token F1 against the reference answer, this project's stand-in for
#   the judge (``open_f1_not_official``); not comparable with published MMVU numbers.


def score(response: str, sample: Sample, profile: str = "official") -> dict[str, float]:
    """Multiple choice: ``correct``/``extracted``; open-ended: ``f1`` (token F1, stand-in).

    >>> mc = Sample("v1", "", "q", "p", "multiple_choice", "B", ("A. x", "B. y"))
    >>> score("<think>...</think>Therefore, the final answer is: B", mc)
    {'score': 1.0, 'correct': 1.0, 'extracted': 1.0}
    >>> oe = Sample("v2", "", "q", "p", "open_ended", "photosynthesis")
    >>> score("<answer>Photosynthesis.</answer>", oe)
    {'score': 1.0, 'f1': 1.0}
    """
    _check(profile)
    answer = extract_answer(response)
    if sample.kind == "multiple_choice":
        letters = "".join(option[0] for option in sample.options)
        letter = extract_letter(answer, "robust", letters)
        correct = float(letter == sample.target)
        return {"score": correct, "correct": correct, "extracted": float(bool(letter))}
    f1 = token_f1(answer, sample.target)
    if f1 is None:  # a blank reference: a data problem, never a wrong answer
        raise ValueError(f"mmvu {sample.id}: the reference answer is blank")
    return {"score": f1, "f1": f1}


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = "official"
) -> dict[str, float]:
    """``mc_accuracy`` and ``open_f1_not_official`` over their items; NaN for a kind absent.

    >>> mc = Sample("v1", "", "q", "p", "multiple_choice", "B", ("A. x", "B. y"))
    >>> oe = Sample("v2", "", "q", "p", "open_ended", "red car")
    >>> aggregate([mc, mc, oe], [score("B", mc), score("A", mc), score("red red car", oe)])
    {'mc_accuracy': 0.5, 'open_f1_not_official': 0.8}
    """
    _check(profile)
    mc = [m["correct"] for s, m in zip(samples, metrics, strict=True) if s.kind != "open_ended"]
    f1 = [m["f1"] for s, m in zip(samples, metrics, strict=True) if s.kind == "open_ended"]
    return {
        "mc_accuracy": sum(mc) / len(mc) if mc else math.nan,
        "open_f1_not_official": sum(f1) / len(f1) if f1 else math.nan,
    }


def _check(profile: str) -> None:
    if profile not in PROFILES:
        raise ValueError(f"mmvu has no profile {profile!r}; known: official")
