"""Charades-STA scoring: R@1 at IoU 0.3/0.5/0.7 and mIoU, one profile per reference harness.

- ``lmms_eval`` (default): lmms-eval@75571cf ``tasks/charades_sta/utils.py``, whose task
  computes the metrics: reasoning stripped; ``extract_time`` (clock ranges, then "a - b",
  then clock times, then first numbers, then "a s - b s", from the sentences with a
  start/end/happen keyword, or all of them); a reply without exactly one pair has IoU 0.
  The task keys replies by "video>>>caption>>>timestamp", so a repeated query counts once,
  with its last reply; ``IOU@3/5/7`` and ``mIOU`` are x100.
- ``lmms_eval_2c08ee5``: ``tasks/charades_sta/eval_tvg.py``, the script that scores the
  submission file lmms-eval@2c08ee5's task writes (the reasoning-stripped replies): its
  ``extract_time`` reads only keyword sentences ("12.5 - 20.0" alone is unparsed), and an
  unparsed reply is scored as [end + 10, end + 20]. Where the script divides by zero (a
  reply equal to a zero-length gold) it crashes; that item scores 0 here and is counted in
  ``reference_raises``.
- ``robust``: this project's reader (:func:`agents.scoring.intervals.parse_interval`):
  "a - b", "a to b", clock times, units, brackets, start/end phrases; ``r1@0.3`` ... x100.
- ``paravt``: the ParaVT release driver (ParaVT@cf55249): ``extract_time_from_response`` and
  ``temporal_iou``; ``mIoU`` and ``R@0.3`` ... as fractions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from agents.scoring.intervals import iou, parse_interval
from agents.scoring.reply import VIEWS
from agents.scoring.tvg_rules import (
    lmms_charades_iou,
    lmms_charades_times,
    paravt_iou,
    paravt_times,
    tvg_script_iou,
    tvg_script_times,
)
from evals.sample import Sample
from evals.scorers.base import Profile, Scored
from evals.scorers.mc import LMMS_EVAL, PARAVT_SOURCE, pick

PROFILES = {
    "lmms_eval": Profile(
        f"{LMMS_EVAL}@75571cf lmms_eval/tasks/charades_sta/utils.py", "lmms_eval", "mIOU"
    ),
    "lmms_eval_2c08ee5": Profile(
        f"{LMMS_EVAL}@2c08ee5 lmms_eval/tasks/charades_sta/eval_tvg.py", "lmms_eval", "mIOU"
    ),
    "robust": Profile("this project: agents/scoring/intervals.py parse_interval", "as_is", "miou"),
    "paravt": Profile(
        PARAVT_SOURCE.replace("extract_letter", "extract_time_from_response, temporal_iou"),
        "as_is",
        "mIoU",
    ),
}
DEFAULT = "lmms_eval"
THRESHOLDS = (0.3, 0.5, 0.7)


def _profile(name: str) -> Profile:
    return pick("charades", PROFILES, name)


def gold(sample: Sample) -> tuple[float, float]:
    return float(sample.extra["start"]), float(sample.extra["end"])


def score(reply: str, sample: Sample, profile: str = DEFAULT) -> Scored:
    """``iou`` (= ``score``) of one final reply with the gold, and the R@1 hits.

    >>> s = Sample("3MSZA_0", "", "q", "p", "grounding", "24.3-30.4",
    ...            extra={"start": 24.3, "end": 30.4})
    >>> score("The event happens in the 24.3 - 30.4 seconds.", s).metrics["iou"]
    1.0
    >>> score("24.3 - 30.4", s, "lmms_eval_2c08ee5").extracted
    []
    """
    spec = _profile(profile)
    filtered = VIEWS[spec.reads](reply)
    target, raised = gold(sample), 0.0
    if profile == "lmms_eval":
        found = lmms_charades_times(filtered)
        overlap = lmms_charades_iou(target, found[0]) if len(found) == 1 else 0.0
    elif profile == "lmms_eval_2c08ee5":
        found = tvg_script_times(filtered)
        pred = found[0] if len(found) == 1 else [target[1] + 10, target[1] + 20]
        value = tvg_script_iou(target, pred)
        overlap, raised = (0.0, 1.0) if value is None else (value, 0.0)
    elif profile == "paravt":
        found = paravt_times(reply)
        overlap = paravt_iou(found, target) if found else 0.0
    else:
        pair = parse_interval(filtered)
        found = list(pair) if pair else None
        overlap = iou(pair, target) if pair else 0.0
    metrics = {
        "score": overlap,
        "iou": overlap,
        **{f"r@{t}": float(overlap >= t) for t in THRESHOLDS},
    }
    if profile == "lmms_eval_2c08ee5":
        metrics["reference_raises"] = raised
    return Scored(metrics, filtered, found)


def _unique_ious(samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]]) -> list:
    """One IoU per "video>>>caption>>>timestamp" key, the last reply winning, in the order
    the keys first appear (lmms-eval merges its per-item submissions into one dict)."""
    by_key: dict[tuple, float] = {}
    for sample, item in zip(samples, metrics, strict=True):
        by_key[(sample.cluster, sample.question, gold(sample))] = item["iou"]
    return list(by_key.values())


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = DEFAULT
) -> dict[str, float]:
    """The profile's R@1 and mIoU over the items, named and scaled as its harness reports.

    >>> s = [Sample(f"v_{i}", "", f"q{i}", "p", "grounding", "0-1", cluster="v",
    ...             extra={"start": 0, "end": 1}) for i in range(4)]
    >>> m = [{"iou": x} for x in (0.75, 0.375, 0.0, 0.5)]
    >>> aggregate(s, m)
    {'IOU@3': 75.0, 'IOU@5': 50.0, 'IOU@7': 25.0, 'mIOU': 40.625}
    """
    _profile(profile)
    if profile == "paravt":
        ious = [m["iou"] for m in metrics]
        n = max(len(ious), 1)
        out = {"mIoU": sum(ious) / n}
        out |= {f"R@{t}": sum(1 for v in ious if v >= t) / n for t in THRESHOLDS}
        return out
    if profile == "robust":
        ious = [m["iou"] for m in metrics]
        if not ious:
            return {"miou": math.nan}
        out = {f"r1@{t}": 100 * sum(v >= t for v in ious) / len(ious) for t in THRESHOLDS}
        return {**out, "miou": 100 * sum(ious) / len(ious)}
    ious = _unique_ious(samples, metrics)
    total = len(ious)
    out = {
        f"IOU@{int(t * 10)}": sum(1 for v in ious if v >= t) * 100 / total if total else 0
        for t in THRESHOLDS
    }
    out["mIOU"] = sum(ious) * 100 / total if total else 0
    if profile == "lmms_eval_2c08ee5":
        out["reference_raises"] = sum(m.get("reference_raises", 0.0) for m in metrics)
    return out
