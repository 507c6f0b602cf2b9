"""LVBench scoring, one profile per reference harness.

- ``official``: THUDM/LVBench@f998d95: ``lvbench/utils/answer_util.py`` ``polish_answer``
  on the whole reply (the first character of the first word before the first ")", inside
  "(" if any: "(B) the cat" -> "B", "answer: d" -> "a"), compared exactly with the gold
  letter by ``lvbench/metrics/compute_accuracy.py``: ``acc`` over every answered item and
  one accuracy per question type (an item counts toward each of its types), as fractions.
- ``lmms_eval``: lmms-eval@75571cf ``tasks/lvbench/utils.py``: reasoning stripped, the
  ranked ``mcq_extract`` over A-D, ``lvbench_score`` the mean of exact matches.
- ``lmms_eval_2c08ee5``: lmms-eval@2c08ee5: reasoning stripped, Video-MME's six-prefix rule.
- ``paravt``: the ParaVT release driver (ParaVT@cf55249).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial

from agents.scoring.mcq_rules import BRADY_PREFIXES, lvbench_polish, mcq_extract, prefix_rule
from evals.sample import Sample
from evals.scorers.base import Profile, Scored
from evals.scorers.mc import (
    LMMS_EVAL,
    PARAVT_SOURCE,
    categories_of,
    letter_item,
    mean_of,
    paravt_accuracy,
    paravt_item,
    pick,
)

PROFILES = {
    "official": Profile(
        "THUDM/LVBench@f998d95 lvbench/utils/answer_util.py: polish_answer; "
        "lvbench/metrics/compute_accuracy.py: compute_accuracy",
        "as_is",
        "acc",
    ),
    "lmms_eval": Profile(
        f"{LMMS_EVAL}@75571cf lmms_eval/tasks/lvbench/utils.py, "
        "lmms_eval/tasks/_task_utils/mcq_extract.py",
        "lmms_eval",
        "lvbench_score",
    ),
    "lmms_eval_2c08ee5": Profile(
        f"{LMMS_EVAL}@2c08ee5 lmms_eval/tasks/lvbench/utils.py", "lmms_eval", "lvbench_score"
    ),
    "paravt": Profile(PARAVT_SOURCE, "as_is", "accuracy"),
}
DEFAULT = "official"
RULES = {
    "official": lvbench_polish,
    "lmms_eval": partial(mcq_extract, choices="ABCD"),
    "lmms_eval_2c08ee5": partial(prefix_rule, prefixes=BRADY_PREFIXES),
}


def _profile(name: str) -> Profile:
    return pick("lvbench", PROFILES, name)


def score(reply: str, sample: Sample, profile: str = DEFAULT) -> Scored:
    """``correct`` for one final reply, with what the harness read and extracted.

    >>> s = Sample("1", "", "q", "p", "multiple_choice", "D", ("A. 1", "B. 2", "C. 3", "D. 4"))
    >>> score("(D) 1633", s).metrics["correct"], score("answer: d", s).extracted
    (1.0, 'a')
    """
    spec = _profile(profile)
    if profile == "paravt":
        return paravt_item(reply, sample, spec)
    return letter_item(reply, sample, spec, RULES[profile])


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = DEFAULT
) -> dict[str, float]:
    """official: ``acc`` and the accuracy of each question type (as the annotation names it);
    lmms-eval: ``lvbench_score``; paravt: ``accuracy``. NaN where the reference divides by 0.

    >>> s = [Sample(str(i), "", "q", "p", "multiple_choice", "A",
    ...             categories={"question_type": t})
    ...      for i, t in enumerate([["reasoning", "event understanding"], ["reasoning"]])]
    >>> aggregate(s, [{"correct": 1.0}, {"correct": 0.0}])
    {'reasoning': 0.5, 'event understanding': 1.0, 'acc': 0.5}
    """
    _profile(profile)
    if profile == "paravt":
        return paravt_accuracy(metrics)
    if not metrics:
        return {PROFILES[profile].primary: math.nan}
    if profile.startswith("lmms_eval"):
        return {"lvbench_score": mean_of(metrics, "correct")}
    right: dict[str, int] = {}
    total: dict[str, int] = {}
    for sample, item in zip(samples, metrics, strict=True):
        for name in categories_of(sample, "question_type"):
            total[name] = total.get(name, 0) + 1
            right[name] = right.get(name, 0) + int(item["correct"])
    out = {name: right[name] / total[name] for name in total}
    return {**out, "acc": float(sum(int(m["correct"]) for m in metrics)) / len(metrics)}
