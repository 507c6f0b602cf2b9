"""Scoring for mlvu: per-item rules and the aggregate, by profile."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from agents.scoring.extract import extract_answer
from agents.scoring.letters import mlvu_official
from evals.sample import Sample

LETTERS = "ABCDEFGH"
MC_TASKS = ("plotQA", "needle", "ego", "count", "order", "anomaly_reco", "topic_reasoning")

#
# The letter is read by MLVU's own ``check_ans`` (agents.scoring.letters.mlvu_official: the
# character just before the first ")", else the whole reply when it is one letter) from the
# answer text of the turn (agents.scoring.extract_answer). Both profiles extract the same
# way; they differ in how per-task accuracies become M-Avg:
#
# - official: the MLVU paper's M-Avg, the mean of the per-task accuracies over the tasks
#   present (macro; the 7 multiple-choice tasks on the full dev set).
# - vlmevalkit: VLMEvalKit's M-Avg (``vlmeval/dataset/mlvu.py``, class MLVU), a micro mean
#   (success / overall) over ITS list of M-Avg tasks, which leaves out ``order``. Its
#   per-item check (``check_ans_with_model``, an LLM judge with an exact-match fallback) is
#   not reproduced. In a breakdown holding no task of that list (only ``order`` items) the
#   micro mean over the items given is reported instead.
#
# Generation tasks (sub_scene, summary) need the G-Avg judge, which is not implemented.

VLMEVALKIT_M_AVG_TASKS = ("plotQA", "needle", "ego", "count", "anomaly_reco", "topic_reasoning")
"""VLMEvalKit's ``type_data_dict["M-Avg"]``: the 7 multiple-choice tasks less ``order``."""

Counts = dict[str, tuple[float, int]]  # task -> (correct, items)


def _macro(counts: Counts) -> float:
    return sum(correct / n for correct, n in counts.values()) / len(counts)


def _vlmevalkit_micro(counts: Counts) -> float:
    kept = [counts[t] for t in VLMEVALKIT_M_AVG_TASKS if t in counts] or list(counts.values())
    return sum(correct for correct, _ in kept) / sum(n for _, n in kept)


M_AVG: dict[str, Callable[[Counts], float]] = {
    "official": _macro,
    "vlmevalkit": _vlmevalkit_micro,
}
"""Profile -> how per-task (correct, items) counts become M-Avg."""


def _m_avg_rule(profile: str) -> Callable[[Counts], float]:
    try:
        return M_AVG[profile]
    except KeyError:
        known = ", ".join(M_AVG)
        raise ValueError(f"mlvu has no profile {profile!r}; known: {known}") from None


def score(response: str, sample: Sample, profile: str = "official") -> dict[str, float]:
    """``correct`` and ``extracted`` for one multiple-choice item, by MLVU's check.

    >>> s = Sample("plotQA_0", "", "q", "p", "multiple_choice", "B", ("A. x", "B. y", "C. z"))
    >>> score("<think>...</think><answer>B) The man opens the door.</answer>", s)
    {'score': 1.0, 'correct': 1.0, 'extracted': 1.0}
    >>> score("The best option is B", s)["extracted"]  # no ")" and not a bare letter
    0.0
    """
    _m_avg_rule(profile)
    if sample.kind != "multiple_choice":
        raise ValueError(
            f"mlvu {sample.id}: generation tasks need the G-Avg LLM judge, which is not "
            "implemented; load the multiple-choice tasks only"
        )
    letter = mlvu_official(extract_answer(response), LETTERS[: len(sample.options)])
    correct = float(letter == sample.target)
    return {"score": correct, "correct": correct, "extracted": float(bool(letter))}


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = "official"
) -> dict[str, float]:
    """``m_avg`` under the profile, and ``acc/<task>`` for every task present (NaN when empty).

    >>> s = [Sample(f"{t}_0", "", "q", "p", "multiple_choice", "A", categories={"task": t})
    ...      for t in ("count", "count", "count", "ego")]
    >>> m = [{"correct": c} for c in (1.0, 1.0, 1.0, 0.0)]
    >>> aggregate(s, m)["m_avg"], aggregate(s, m, "vlmevalkit")["m_avg"]
    (0.5, 0.75)
    """
    average = _m_avg_rule(profile)
    tally: dict[str, list[float]] = {}
    for sample, item in zip(samples, metrics, strict=True):
        tally.setdefault(str(sample.categories.get("task", "")), []).append(item["correct"])
    if not tally:
        return {"m_avg": math.nan}
    tasks = [t for t in MC_TASKS if t in tally] + sorted(set(tally) - set(MC_TASKS))
    counts = {t: (sum(tally[t]), len(tally[t])) for t in tasks}
    return {"m_avg": average(counts), **{f"acc/{t}": c / n for t, (c, n) in counts.items()}}
