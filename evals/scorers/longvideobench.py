"""Scoring for longvideobench: per-item rules and the aggregate, by profile."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping, Sequence

from agents.scoring.extract import extract_answer
from agents.scoring.letters import videomme_official
from evals.sample import Sample

LETTERS = "ABCDE"

#
# The letter is read from the answer text of the turn (agents.scoring.extract_answer) by
# the VideoMME-style rule the references use; the profiles differ when no letter is found:
#
# - official: VideoMME's official rule (agents.scoring.letters.videomme_official) over the
#   item's own letters (A-D or A-E, by its option count); no letter counts wrong.
# - lmms_eval: lmms-eval's ``parse_multi_choice_response`` (``tasks/longvideobench/utils.py``):
#   its own eight prefixes (no glued strings, no "Answer:"), the first of A-E whatever the
#   option count, and a random option letter when none is found. The random draw is seeded
#   from the sample id, so a re-score gives the same letter (lmms-eval's is unseeded).

LMMS_EVAL_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Best answer:",
    "Best option:",
)
"""lmms-eval's LongVideoBench answer prefixes, removed anywhere in the reply, in order."""


def _official(answer: str, sample: Sample) -> tuple[str, bool]:
    return videomme_official(answer, LETTERS[: len(sample.options)]), False


def random_letter(sample: Sample) -> str:
    """The option letter lmms_eval falls back to for ``sample``: uniform, seeded by its id."""
    digest = hashlib.sha256(f"longvideobench/{sample.id}".encode()).digest()
    return LETTERS[int.from_bytes(digest[:8], "big") % len(sample.options)]


def _lmms_eval(answer: str, sample: Sample) -> tuple[str, bool]:
    text = answer.strip()
    for prefix in LMMS_EVAL_PREFIXES:
        text = text.replace(prefix, "")
    found = re.search(f"[{LETTERS}]", text)
    return (found[0], False) if found else (random_letter(sample), True)


RULES: dict[str, Callable[[str, Sample], tuple[str, bool]]] = {
    "official": _official,
    "lmms_eval": _lmms_eval,
}
"""Profile -> (answer text, sample) -> (letter or "", whether the letter is a random guess)."""


def _rule(profile: str) -> Callable[[str, Sample], tuple[str, bool]]:
    try:
        return RULES[profile]
    except KeyError:
        known = ", ".join(RULES)
        raise ValueError(f"longvideobench has no profile {profile!r}; known: {known}") from None


def score(response: str, sample: Sample, profile: str = "official") -> dict[str, float]:
    """``correct``, ``extracted`` (a letter was read) and ``random_guess`` for one turn.

    >>> s = Sample("86CxyhFV9MI_0", "", "q", "p", "multiple_choice", "E",
    ...            options=("A. a", "B. b", "C. c", "D. d", "E. e"))
    >>> score("<think>Not D.</think><answer>E</answer>", s)
    {'score': 1.0, 'correct': 1.0, 'extracted': 1.0, 'random_guess': 0.0}
    >>> score("no idea", s)["correct"], score("no idea", s, "lmms_eval")["random_guess"]
    (0.0, 1.0)
    """
    letter, guessed = _rule(profile)(extract_answer(response), sample)
    correct = float(letter == sample.target)
    return {
        "score": correct,
        "correct": correct,
        "extracted": float(bool(letter) and not guessed),
        "random_guess": float(guessed),
    }


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = "official"
) -> dict[str, float]:
    """``accuracy`` over every item (both profiles), ``answered`` and ``random_guesses`` shares.

    NaN for no items.
    """
    _rule(profile)
    n = len(metrics)
    if n == 0:
        return {"accuracy": math.nan, "answered": math.nan, "random_guesses": math.nan}
    return {
        "accuracy": sum(m["correct"] for m in metrics) / n,
        "answered": sum(m["extracted"] for m in metrics) / n,
        "random_guesses": sum(m.get("random_guess", 0.0) for m in metrics) / n,
    }
