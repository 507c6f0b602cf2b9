"""Scoring for charades: per-item rules and the aggregate, by profile."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence

from agents.scoring.extract import extract_answer
from agents.scoring.intervals import iou, parse_interval, recall_at
from evals.sample import Sample

#
# The interval is read from the answer text of the turn (agents.scoring.extract_answer) and
# scored by IoU with the gold [start, end] in ``extra``; a reply with no interval has IoU 0.
# R@1 at IoU >= 0.3/0.5/0.7 and mIoU are reported x100, as the literature does. The
# profiles differ only in how the interval is read:
#
# - official: this project's parser (agents.scoring.intervals.parse_interval): "a - b",
#   "a to b", "mm:ss" and "hh:mm:ss", units, brackets, start/end phrases; a reversed pair is
#   swapped. (Charades-STA ships no reference parser for free-text replies.)
# - lmms_eval: a port of ``extract_time`` from lmms-eval's ``tasks/charades_sta/eval_tvg.py``
#   (lmms-eval only writes a submission file; that script scores it). Its quirks are kept:
#   every "to" becomes "-" (inside words too), the first "a - b" of plain numbers wins (so
#   "1:05 - 1:12" reads as 5 - 1, swapped to 1 - 5), else the first numbers of the first two
#   sentences naming a start or end. Its last fallback (hh:mm:ss in such sentences) is left
#   out: it can never yield a pair, as every sentence it reads already gave the step before
#   a number (and it reads a regex group tuple as a time string). Where the script would
#   crash (float("1..2")) the reply counts as unparsed here. Against the float16 gold
#   of the HF parquet (what lmms-eval scores against) load that format; see ``notes``.

THRESHOLDS = (0.3, 0.5, 0.7)
_TVG_EXAMPLE = "a specific example is : 20.8 - 30.0 seconds"
_TVG_KEYWORDS = ("starts", "ends", "happens in", "start time", "end time", "start", "end", "happen")
_TVG_PAIR = re.compile(r"(\d+\.*\d*)\s*-\s*(\d+\.*\d*)")
_TVG_NUMBER = re.compile(r"\b(\d+\.\d+\b|\b\d+)\b")


def _pairs(times: list[float]) -> list[tuple[float, float]]:
    times = times[: len(times) // 2 * 2]
    return [(times[i], times[i + 1]) for i in range(0, len(times), 2)]


def lmms_eval_interval(text: str) -> tuple[float, float] | None:
    """lmms-eval's ``extract_time`` (eval_tvg.py): the first pair it finds, ordered, or None.

    >>> lmms_eval_interval("The event happens in the 12.5 - 20.0 seconds.")
    (12.5, 20.0)
    >>> lmms_eval_interval("from 1:05 to 1:12")  # "to" -> "-", then "05 - 1"
    (1.0, 5.0)
    >>> lmms_eval_interval("12.4, 20.0.") is None
    True
    """
    paragraph = text.lower().replace(_TVG_EXAMPLE, "").replace("to", "-")
    sentences = re.split(r"[!?\n]", paragraph)
    candidates = [s for s in sentences if any(k in s for k in _TVG_KEYWORDS)]
    try:
        found = [(float(a), float(b)) for a, b in _TVG_PAIR.findall(paragraph)]
        if not found:
            firsts = (_TVG_NUMBER.findall(s) for s in candidates)
            found = _pairs([float(hit[0]) for hit in firsts if hit])
    except ValueError:  # "1..2" matches the upstream pattern but is no float
        return None
    if not found:
        return None
    start, end = found[0]
    return (start, end) if end > start else (end, start)


PARSERS: dict[str, Callable[[str], tuple[float, float] | None]] = {
    "official": parse_interval,
    "lmms_eval": lmms_eval_interval,
}
"""Profile -> (answer text) -> [start, end] seconds or None."""


def _parser(profile: str) -> Callable[[str], tuple[float, float] | None]:
    try:
        return PARSERS[profile]
    except KeyError:
        known = ", ".join(PARSERS)
        raise ValueError(f"charades has no profile {profile!r}; known: {known}") from None


def score(response: str, sample: Sample, profile: str = "official") -> dict[str, float]:
    """IoU with the gold interval and the R@1 hits at 0.3/0.5/0.7, for one turn.

    >>> s = Sample("3MSZA_0", "", "q", "p", "grounding", "24.3-30.4",
    ...            extra={"start": 24.3, "end": 30.4})
    >>> score("<think>The light goes on late.</think><answer>24.3 - 30.4</answer>", s)
    {'score': 1.0, 'iou': 1.0, 'r@0.3': 1.0, 'r@0.5': 1.0, 'r@0.7': 1.0}
    """
    found = _parser(profile)(extract_answer(response))
    overlap = iou(found, (sample.extra["start"], sample.extra["end"])) if found else 0.0
    return {
        "score": overlap,
        "iou": overlap,
        **{f"r@{t}": float(overlap >= t) for t in THRESHOLDS},
    }


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = "official"
) -> dict[str, float]:
    """``r1@0.3``, ``r1@0.5``, ``r1@0.7`` and ``miou``, all x100 (NaN for no items).

    >>> aggregate([], [{"iou": 0.75}, {"iou": 0.375}, {"iou": 0.0}, {"iou": 0.5}])
    {'r1@0.3': 75.0, 'r1@0.5': 50.0, 'r1@0.7': 25.0, 'miou': 40.625}
    """
    _parser(profile)
    ious = [m["iou"] for m in metrics]
    out = {}
    for t in THRESHOLDS:
        share = recall_at(ious, t)
        out[f"r1@{t}"] = 100 * share if share is not None else math.nan
    out["miou"] = 100 * sum(ious) / len(ious) if ious else math.nan
    return out
