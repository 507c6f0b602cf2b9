"""Video-MME scoring, one profile per reference harness (tests/data/parity proves each).

- ``official``: BradyFU/Video-MME@4e7566d ``evaluation/eval_your_results.py`` (the script in
  the Video-MME repository, deleted in 49a2e67). The whole reply; its six answer prefixes
  (two pairs glued by missing commas, so "The best option is" and "Best answer:" are never
  removed, and "Answer: C" reads as the A of "Answer"); the first capital A-D. Accuracy is
  100 x correct / answered: a reply with no letter leaves the denominator.
- ``official_readme``: the copy the Video-MME README links today,
  thanku-all/parse_answer@afd52cf ``eval_your_results.py``: the same with four more
  prefixes ("Answer:", "Option:", "The correct answer", "The correct option").
- ``lmms_eval``: lmms-eval@75571cf ``tasks/videomme/utils.py``: reasoning blocks stripped,
  then ``tasks/_task_utils/mcq_extract.py``'s ranked extractor over A-D; 100 x correct /
  every item (``videomme_perception_score``).
- ``lmms_eval_2c08ee5``: lmms-eval@2c08ee5, before the April 2026 switch: reasoning
  stripped, then the official six-prefix rule; 100 x correct / every item.
- ``paravt``: the ParaVT release's own evaluation driver (ParaVT@cf55249): its
  ``extract_letter`` on the whole reply; accuracy over every item, and per duration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from agents.scoring.mcq_rules import BRADY_PREFIXES, README_PREFIXES, mcq_extract, prefix_rule
from evals.sample import Sample
from evals.scorers.base import Profile, Scored
from evals.scorers.mc import (
    LMMS_EVAL,
    PARAVT_SOURCE,
    letter_item,
    paravt_accuracy,
    paravt_item,
    percent_of_all,
    pick,
)

PROFILES = {
    "official": Profile(
        "BradyFU/Video-MME@4e7566d evaluation/eval_your_results.py: extract_characters_regex, "
        "eval_your_results",
        "as_is",
        "overall",
        "accuracy over answered items; the script prints it to one decimal",
    ),
    "official_readme": Profile(
        "thanku-all/parse_answer@afd52cf eval_your_results.py (linked from the Video-MME README)",
        "as_is",
        "overall",
        "accuracy over answered items",
    ),
    "lmms_eval": Profile(
        f"{LMMS_EVAL}@75571cf lmms_eval/tasks/videomme/utils.py, "
        "lmms_eval/tasks/_task_utils/mcq_extract.py",
        "lmms_eval",
        "videomme_perception_score",
    ),
    "lmms_eval_2c08ee5": Profile(
        f"{LMMS_EVAL}@2c08ee5 lmms_eval/tasks/videomme/utils.py",
        "lmms_eval",
        "videomme_perception_score",
    ),
    "paravt": Profile(PARAVT_SOURCE, "as_is", "accuracy"),
}
DEFAULT = "official"
RULES = {
    "official": partial(prefix_rule, prefixes=BRADY_PREFIXES),
    "official_readme": partial(prefix_rule, prefixes=README_PREFIXES),
    "lmms_eval": partial(mcq_extract, choices="ABCD"),
    "lmms_eval_2c08ee5": partial(prefix_rule, prefixes=BRADY_PREFIXES),
}
DURATIONS = ("short", "medium", "long")


def _profile(name: str) -> Profile:
    return pick("videomme", PROFILES, name)


def score(reply: str, sample: Sample, profile: str = DEFAULT) -> Scored:
    """``correct`` and ``answered`` for one final reply, with what was read and extracted.

    >>> s = Sample("001-1", "", "q", "p", "multiple_choice", "C")
    >>> score("Answer: C", s).extracted, score("Answer: C", s, "official_readme").extracted
    ('A', 'C')
    >>> score("<think>B or C?</think>\\nC", s, "lmms_eval").filtered
    'C'
    """
    spec = _profile(profile)
    if profile == "paravt":
        return paravt_item(reply, sample, spec)
    return letter_item(reply, sample, spec, RULES[profile])


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = DEFAULT
) -> dict[str, float]:
    """The profile's own totals: ``overall`` (official: 100 x correct / answered, and the
    ``answered`` share), ``videomme_perception_score`` (lmms-eval) or ParaVT's ``accuracy``.

    >>> s = Sample("001-1", "", "q", "p", "multiple_choice", "C")
    >>> m = [score("C", s).metrics, score("I cannot tell.", s).metrics]
    >>> aggregate([s, s], m)["overall"], aggregate([s, s], m, "lmms_eval")
    (100.0, {'videomme_perception_score': 50.0})
    """
    _profile(profile)
    if profile.startswith("official"):
        answered = int(sum(m["answered"] for m in metrics))
        correct = int(sum(m["correct"] for m in metrics if m["answered"]))
        overall = 100 * correct / answered if answered > 0 else 0
        return {"overall": overall, "answered": answered / len(metrics) if metrics else 0}
    if profile == "paravt":
        out = paravt_accuracy(metrics)
        for duration in DURATIONS:
            rows = [
                m
                for s, m in zip(samples, metrics, strict=True)
                if s.categories.get("duration") == duration
            ]
            if rows:
                out[f"acc_{duration}"] = sum(m["correct"] for m in rows) / len(rows)
                out[f"n_{duration}"] = len(rows)
        return out
    return {"videomme_perception_score": percent_of_all(metrics)}
