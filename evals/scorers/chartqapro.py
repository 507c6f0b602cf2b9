"""ChartQAPro scoring: relaxed accuracy, as vis-nlp/ChartQAPro@4b422c6 ``evaluate_predictions.py``
(with PyPI ``anls==0.0.2``) computes it.

- ``official``: the whole reply is the prediction. The script's rules, reproduced rule for
  rule: gold = Answer[-1] and prediction, each with "." and then "\n" stripped from both
  ends; a gold written as a list ("[a, b]") is quoted item by item and parsed; a prediction
  is a list only when it parses as a Python list literal; items are compared in order, a
  missing or extra item scoring 0, and the score is the mean over items; Year flags (the
  last one for Conversational; repeated when shorter than the gold list): YES means a
  case-insensitive exact match; otherwise numbers ("%" stripped, read by Python's float, so
  "1,234" is text) within 5% relative error (a gold of 0 needs exactly 0), else ANLS with
  threshold 0.5. ``Overall`` and one mean per question type, as fractions.
- ``robust``: the same rules on the answer the board study's prompt asks for (the text
  after "Final Answer:" in the answer text of the turn); ``formatted`` says the line was
  there.
- ``paper``: ``robust`` plus exact match for Multi Choice and Fact Checking, which the paper
  states and the released script computes but never passes on.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from agents.scoring.text import anls
from evals.sample import Sample
from evals.scorers.base import Profile, Scored, final_answer

_PARSE_ERRORS = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)

PROFILES = {
    "official": Profile(
        "vis-nlp/ChartQAPro@4b422c6 evaluate_predictions.py: evaluate_predictions_chartqapro, "
        "relaxed_correctness_chartqapro (anls==0.0.2)",
        "as_is",
        "Overall",
    ),
    "robust": Profile(
        "this project: the official rules on the Final Answer line", "as_is", "Overall"
    ),
    "paper": Profile(
        "this project: robust, with exact match for Multi Choice and Fact "
        "Checking as the ChartQAPro paper states",
        "as_is",
        "Overall",
    ),
}
DEFAULT = "official"
EXACT_TYPES = frozenset({"Multi Choice", "Fact Checking"})
_LIST_RE = re.compile(r"^\[(.*)\]$")
_UNQUOTED_RE = re.compile(r"(?<!['\w])(\w[^,]*?)(?!['\w])")


def _literal_list(text: str) -> list[str] | None:
    try:
        parsed = ast.literal_eval(text)
    except _PARSE_ERRORS:
        return None
    return [str(x).strip(" '") for x in parsed] if isinstance(parsed, list) else None


def _gold_items(target: str) -> list[str]:
    """The gold as items: an unquoted list "[a, b]" is quoted first (the official regex,
    which also glues "New York" into 'New' 'York' -> "NewYork", as the script does)."""
    fixed: Any = target
    found = _LIST_RE.match(target.strip())
    if found:
        try:
            fixed = ast.literal_eval("[" + _UNQUOTED_RE.sub(r"'\1'", found.group(1)) + "]")
        except _PARSE_ERRORS:
            fixed = target
    return _literal_list(str(fixed)) or [target]


def _float(text: str) -> float | None:
    try:
        return float(text.strip().strip("%"))
    except ValueError:
        return None


def _single(target: str, prediction: str, tolerance: float) -> float:
    t, p = target.strip().strip("%").strip(), prediction.strip().strip("%").strip()
    t_value, p_value = _float(t), _float(p)
    if t_value is not None and p_value is not None:
        if t_value == 0.0:
            return float(p_value == 0.0)
        return float(abs(p_value - t_value) / abs(t_value) <= tolerance)
    similarity = anls(p.lower(), t.lower(), threshold=0.5)
    if similarity is None:  # blank gold item: the anls package gives 1 to a blank prediction
        return float(not p.strip())
    return similarity


def _check_profile(profile: str) -> None:
    if profile not in PROFILES:
        raise ValueError(f"chartqapro has no profile {profile!r}; known: {', '.join(PROFILES)}")


def relaxed_correctness(
    target: str,
    prediction: str,
    year_flags: Sequence[str],
    *,
    tolerance: float = 0.05,
    exact: bool = False,
) -> float:
    """ChartQAPro's relaxed correctness of one (already stripped) prediction.

    >>> relaxed_correctness("12.5", "12.9%", ["NO"]), relaxed_correctness("2016", "2017", ["YES"])
    (1.0, 0.0)
    >>> relaxed_correctness("[Asia, Europe]", "['asia', 'Africa']", ["NO"])
    0.5
    """
    golds = _gold_items(target)
    preds = _literal_list(prediction) or [prediction]
    flags = list(year_flags) or ["NO"]
    if len(flags) < len(golds):
        flags = flags * len(golds)
    scores = []
    for i in range(max(len(golds), len(preds))):
        if i >= len(golds) or i >= len(preds):
            scores.append(0.0)
        elif exact or flags[i].upper() == "YES":
            scores.append(float(golds[i].strip().lower() == preds[i].strip().lower()))
        else:
            scores.append(_single(golds[i], preds[i], tolerance))
    return sum(scores) / len(scores) if scores else 0.0


def score(reply: str, sample: Sample, profile: str = DEFAULT) -> Scored:
    """``relaxed_accuracy`` (= ``score``) of one final reply, and (robust, paper) whether the
    reply wrote the ``Final Answer:`` line.

    >>> s = Sample("0", "", "q", "p", "open_ended", "1,200", extra={"year_flags": ["NO"]})
    >>> score("1,200.", s).metrics["relaxed_accuracy"]
    1.0
    >>> score("Reading the bars.\\nFinal Answer: 1,200.", s, "robust").extracted
    '1,200'
    """
    _check_profile(profile)
    metrics: dict[str, float] = {}
    if profile == "official":
        text = reply
    else:
        text, formatted = final_answer(reply)
        metrics["formatted"] = float(formatted)
    prediction = text.strip(".").strip("\n")
    exact = profile == "paper" and sample.categories.get("question_type") in EXACT_TYPES
    value = relaxed_correctness(
        sample.target, prediction, sample.extra.get("year_flags") or ["NO"], exact=exact
    )
    return Scored({"score": value, "relaxed_accuracy": value, **metrics}, text, prediction)


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = DEFAULT
) -> dict[str, float]:
    """The script's report: the mean per question type and ``Overall`` (NaN with no items);
    ``formatted``, the share of replies in the answer format, for robust and paper."""
    _check_profile(profile)
    if not metrics:
        return {"Overall": math.nan}
    by_type: dict[str, list[float]] = {}
    for sample, item in zip(samples, metrics, strict=True):
        kind = str(sample.categories.get("question_type", ""))
        by_type.setdefault(kind, []).append(item["relaxed_accuracy"])
    out = {kind: sum(values) / len(values) for kind, values in by_type.items()}
    out["Overall"] = sum(m["relaxed_accuracy"] for m in metrics) / len(metrics)
    if profile != "official":
        out["formatted"] = sum(m["formatted"] for m in metrics) / len(metrics)
    return out
