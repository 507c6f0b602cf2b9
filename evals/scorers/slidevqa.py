"""SlideVQA scoring: EM and F1 as nttmdlab-nlp/SlideVQA@e1f0bd9 ``evaluate.py`` (the QA task).

- ``official``: the whole reply is the prediction. ``evaluate.py``'s rules, quirks included:
  phrase rewrites are plain substring replacements ("and" -> "," inside words too), the
  "how many"/"which" test reads the question as written (a leading "How many" does not
  trigger it) and removes the next word of the question, with any punctuation attached,
  wherever it occurs in the answer; an item with no shared token scores 0 on both metrics,
  even when both sides normalise to nothing. ``F1`` and ``EM`` are means over every item,
  as fractions (the script prints them x100).
- ``robust``: the same rules on the answer the board study's prompt asks for (the text
  after "Final Answer:" in the answer text of the turn); ``formatted`` says it was there.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence

from evals.sample import Sample
from evals.scorers.base import Profile, Scored, final_answer

PROFILES = {
    "official": Profile(
        "nttmdlab-nlp/SlideVQA@e1f0bd9 evaluate.py: normalize_answer, evaluate_f1_em_qa",
        "as_is",
        "EM",
    ),
    "robust": Profile("this project: the official rules on the Final Answer line", "as_is", "EM"),
}
DEFAULT = "official"
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


def official_scores(prediction: str, gold: str, question: str) -> dict[str, float]:
    """``em``, ``f1``, ``precision`` and ``recall`` of one answer as evaluate.py counts them.

    >>> official_scores("two", "2 times", "How often?")["f1"]
    0.6666666666666666
    """
    pred, ref = normalize(prediction, question).split(), normalize(gold, question).split()
    shared = sum((Counter(pred) & Counter(ref)).values())
    if shared == 0:
        return {"em": 0.0, "f1": 0.0, "precision": 0.0, "recall": 0.0}
    precision, recall = shared / len(pred), shared / len(ref)
    f1 = 2 * precision * recall / (precision + recall)
    return {"em": float(pred == ref), "f1": f1, "precision": precision, "recall": recall}


def score(reply: str, sample: Sample, profile: str = DEFAULT) -> Scored:
    """``em`` (= ``score``), ``f1``, precision and recall; ``formatted`` for robust.

    >>> s = Sample("q1", "", "In how many apps is it offered?", "p", "open_ended", "3")
    >>> score("three apps", s).metrics["em"], score("Final Answer: three apps", s).metrics["em"]
    (1.0, 0.0)
    >>> score("Final Answer: three apps", s, "robust").metrics["em"]
    1.0
    """
    if profile not in PROFILES:
        raise ValueError(f"slidevqa has no profile {profile!r}; known: {', '.join(PROFILES)}")
    metrics: dict[str, float] = {}
    text = reply
    if profile == "robust":
        text, formatted = final_answer(reply)
        metrics["formatted"] = float(formatted)
    found = official_scores(text, sample.target, sample.question)
    return Scored(
        {"score": found["em"], **found, **metrics}, text, normalize(text, sample.question)
    )


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = DEFAULT
) -> dict[str, float]:
    """evaluate.py's QA scores: ``F1`` and ``EM`` over every item (NaN with none); and the
    answer-format share for robust."""
    if profile not in PROFILES:
        raise ValueError(f"slidevqa has no profile {profile!r}; known: {', '.join(PROFILES)}")
    if not metrics:
        return {"EM": math.nan, "F1": math.nan}
    n = len(metrics)
    out = {"F1": sum(m["f1"] for m in metrics) / n, "EM": sum(m["em"] for m in metrics) / n}
    if profile == "robust":
        out["formatted"] = sum(m["formatted"] for m in metrics) / n
    return out
