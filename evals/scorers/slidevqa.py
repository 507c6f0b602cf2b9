"""Scoring for slidevqa: per-item rules and the aggregate, by profile."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence

from agents.scoring.text import exact_match, token_f1
from evals.sample import Sample
from evals.tasks.documents import (
    final_answer,
    mean_metrics,
)

#
# official: evaluate.py of nttmdlab-nlp/SlideVQA (the QA task), rule for rule, including
# its quirks: phrase rewrites are plain substring replacements ("and" -> "," inside words
# too), the "how many"/"which" test reads the question as written (so a leading "How many"
# does not trigger it) and removes the next word of the question, with any punctuation
# attached, wherever it occurs in the answer; and an item with no shared token scores 0 on
# both metrics, even when both sides normalise to nothing.
# lmms_eval: plain SQuAD v1.1 normalisation (agents.scoring.text) for EM and token F1.

PROFILES = ("official", "lmms_eval")
_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
)
NUMBER_WORDS = {word: str(i) for i, word in enumerate(_NUMBERS.split())}
REWRITES = (
    ("this is ", ""),
    ("it is ", ""),
    ("&", ","),
    ("and", ","),
    ("percent", ""),
    ("organisation", "organization"),
    ("because of", ""),
    ("because", ""),
    ("due to", ""),
    ("hours", "hrs"),
    ("minites", "min"),  # sic, as in evaluate.py
)
_ARTICLES_RE = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def _remove_unit(text: str, question: str) -> str:
    for cue in ("how many", "which"):
        if cue in question:
            rest = question[question.find(cue) + len(cue) :].split()
            if rest:  # evaluate.py would fail on a question ending in the cue
                text = text.replace(rest[0], "")
    return text


def normalize(text: str, question: str) -> str:
    """SlideVQA's answer normalisation, which depends on the question.

    >>> normalize("Three apps and a website", "In how many apps is it offered?")
    '3 website'
    >>> normalize("Yes, it is.", "Is it growing?"), normalize("45 percent", "What share?")
    ('yes', '45')
    """
    text = text.lower()
    for old, new in REWRITES:
        text = text.replace(old, new)
    text = _remove_unit(text, question)
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES_RE.sub(" ", text)
    if text[:3] == "yes" or text[:2] == "no":
        text = text.split()[0]
    return " ".join(NUMBER_WORDS.get(word, word) for word in text.split())


def official_em_f1(prediction: str, gold: str, question: str) -> tuple[float, float]:
    """(EM, F1) of one answer as evaluate.py counts them.

    >>> official_em_f1("two", "2 times", "How often?")
    (0.0, 0.6666666666666666)
    """
    pred, ref = normalize(prediction, question).split(), normalize(gold, question).split()
    shared = sum((Counter(pred) & Counter(ref)).values())
    if shared == 0:
        return 0.0, 0.0
    precision, recall = shared / len(pred), shared / len(ref)
    return float(pred == ref), 2 * precision * recall / (precision + recall)


def score(response: str, sample: Sample, profile: str = "official") -> dict[str, float]:
    """``em`` (= ``score``), ``f1`` and ``formatted`` (it wrote the ``Final Answer:`` line).

    >>> s = Sample("q1", "", "In how many apps is it offered?", "p", "open_ended", "3")
    >>> score("Final Answer: three apps", s)
    {'score': 1.0, 'em': 1.0, 'f1': 1.0, 'formatted': 1.0}
    >>> score("Final Answer: three apps", s, "lmms_eval")["em"]
    0.0
    """
    text, formatted = final_answer(response)
    if profile == "official":
        em, f1 = official_em_f1(text, sample.target, sample.question)
    elif profile == "lmms_eval":
        em, f1 = exact_match(text, sample.target) or 0.0, token_f1(text, sample.target) or 0.0
    else:
        raise ValueError(f"slidevqa has no profile {profile!r}; known: {', '.join(PROFILES)}")
    return {"score": em, "em": em, "f1": f1, "formatted": float(formatted)}


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = "official"
) -> dict[str, float]:
    """Mean EM and F1 over every item (evaluate.py's QA scores) and the answer-format share."""
    if profile not in PROFILES:
        raise ValueError(f"slidevqa has no profile {profile!r}; known: {', '.join(PROFILES)}")
    return mean_metrics(metrics, ("em", "f1", "formatted"))
