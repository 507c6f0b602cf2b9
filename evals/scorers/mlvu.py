"""MLVU (dev, the 7 multiple-choice tasks) scoring, one profile per reference harness.

- ``official``: JUNJIE99/MLVU@fd060c1 ``evaluation/multiple_choice_evaluation/choice_bench.py``.
  ``check_ans`` compares the gold letter with the character before the first ")" of the
  whole reply, or with the whole reply, unstripped, when it has no ")" (the script prefills
  "Best Option: (" so replies read "B) ..."). The gold is ``qa_template``'s: the last
  candidate equal to the answer, or "@" when none is (two needle items of the release).
  M-Avg (``Avg``) is the mean of the per-task accuracies (x100) of the tasks present,
  summed in the script's task order.
- ``lmms_eval``: lmms-eval@75571cf ``tasks/mlvu/utils.py``: reasoning stripped, the ranked
  ``mcq_extract`` over A-D; ``mlvu_percetion_score`` (sic) is the mean over all 7 tasks of
  100 x correct / items, a task with no items counting 0.
- ``lmms_eval_2c08ee5``: lmms-eval@2c08ee5: reasoning stripped, then the stripped reply
  read as ``check_ans`` reads it; the same aggregate.
- ``paravt``: the ParaVT release driver (ParaVT@cf55249): ``extract_letter``, accuracy.

Generation tasks (sub_scene, summary) need MLVU's G-Avg LLM judge, which is not implemented.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from agents.scoring.mcq_rules import mcq_extract, mlvu_check_read, mlvu_lmms_read
from evals.sample import Sample
from evals.scorers.base import Profile, Scored
from evals.scorers.mc import (
    LMMS_EVAL,
    PARAVT_SOURCE,
    letter_item,
    paravt_accuracy,
    paravt_item,
    pick,
)

LETTERS = "ABCDEFGH"
MC_TASKS = ("plotQA", "needle", "ego", "count", "order", "anomaly_reco", "topic_reasoning")
SCRIPT_ORDER = ("count", "ego", "needle", "order", "plotQA", "anomaly_reco", "topic_reasoning")
"""choice_bench.py's ``data_list`` order, in which it sums the per-task accuracies."""
LMMS_TASK_TYPES = ("anomaly_reco", "count", "ego", "needle", "order", "plotQA", "topic_reasoning")

PROFILES = {
    "official": Profile(
        "JUNJIE99/MLVU@fd060c1 evaluation/multiple_choice_evaluation/choice_bench.py: "
        "qa_template, check_ans, main",
        "as_is",
        "Avg",
    ),
    "lmms_eval": Profile(
        f"{LMMS_EVAL}@75571cf lmms_eval/tasks/mlvu/utils.py, "
        "lmms_eval/tasks/_task_utils/mcq_extract.py",
        "lmms_eval",
        "mlvu_percetion_score",
        "lmms-eval sums the 7 task accuracies in a Python set's order, which varies with "
        "the hash seed; the sum here is in a fixed order (equal to within 1e-12)",
    ),
    "lmms_eval_2c08ee5": Profile(
        f"{LMMS_EVAL}@2c08ee5 lmms_eval/tasks/mlvu/utils.py", "lmms_eval", "mlvu_percetion_score"
    ),
    "paravt": Profile(PARAVT_SOURCE, "as_is", "accuracy"),
}
DEFAULT = "official"
RULES = {
    "official": mlvu_check_read,
    "lmms_eval": partial(mcq_extract, choices="ABCD"),
    "lmms_eval_2c08ee5": mlvu_lmms_read,
}


def _profile(name: str) -> Profile:
    return pick("mlvu", PROFILES, name)


def score(reply: str, sample: Sample, profile: str = DEFAULT) -> Scored:
    """``correct`` for one multiple-choice item, with what the harness read.

    >>> s = Sample("plotQA_0", "", "q", "p", "multiple_choice", "B", ("A. x", "B. y", "C. z"))
    >>> score("B) The man opens the door.", s).metrics["correct"], score(" B", s).extracted
    (1.0, ' B')
    """
    spec = _profile(profile)
    if sample.kind != "multiple_choice":
        raise ValueError(
            f"mlvu {sample.id}: generation tasks need the G-Avg LLM judge, which is not "
            "implemented; load the multiple-choice tasks only"
        )
    if profile == "paravt":
        return paravt_item(reply, sample, spec)
    return letter_item(reply, sample, spec, RULES[profile])


def _tally(samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]]) -> dict:
    tally: dict[str, list[int]] = {}
    for sample, item in zip(samples, metrics, strict=True):
        counts = tally.setdefault(str(sample.categories.get("task", "")), [0, 0])
        counts[0] += int(item["correct"])
        counts[1] += 1
    return tally


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = DEFAULT
) -> dict[str, float]:
    """official: each present task's accuracy (x100) and ``Avg``; lmms-eval:
    ``mlvu_percetion_score``; paravt: ``accuracy``.

    >>> s = [Sample(f"{t}_0", "", "q", "p", "multiple_choice", "A", categories={"task": t})
    ...      for t in ("count", "count", "ego")]
    >>> aggregate(s, [{"correct": 1.0}, {"correct": 0.0}, {"correct": 1.0}])["Avg"]
    75.0
    """
    _profile(profile)
    if profile == "paravt":
        return paravt_accuracy(metrics)
    tally = _tally(samples, metrics)
    if profile == "official":
        order = [t for t in SCRIPT_ORDER if t in tally] + sorted(set(tally) - set(SCRIPT_ORDER))
        out = {task: tally[task][0] / tally[task][1] * 100 for task in order}
        return {**out, "Avg": sum(out.values()) / len(out) if out else 0}
    accuracies = [100 * tally[t][0] / tally[t][1] if t in tally else 0 for t in LMMS_TASK_TYPES]
    return {"mlvu_percetion_score": sum(accuracies) / len(LMMS_TASK_TYPES)}
