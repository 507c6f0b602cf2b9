"""Accuracy of an answer by question kind: the one score evaluation reports and RL rewards.

Multiple choice: letter match; grounding: IoU of the first interval; open-ended: token F1
(or exact match). Evaluation scorers and training rewards both call `accuracy_reward`.
"""

from __future__ import annotations

from typing import Any

from agents.scoring.extract import extract_answer
from agents.scoring.intervals import iou, parse_interval
from agents.scoring.letters import extract_letter
from agents.scoring.text import exact_match, token_f1

OPEN_METRICS = {"f1": token_f1, "exact": exact_match}


def _choice(answer: str, target: Any, letters: str, profile: str, _: str) -> float | None:
    gold = extract_letter(str(target), "robust", letters)
    return float(extract_letter(answer, profile, letters) == gold) if gold else None


def _grounding(answer: str, target: Any, *_: Any) -> float | None:
    gold = parse_interval(target) if isinstance(target, str) else tuple(map(float, target))
    if gold is None or len(gold) != 2:
        return None
    pred = parse_interval(answer)
    return 0.0 if pred is None else iou(pred, gold)


def _open(answer: str, target: Any, _letters: str, _profile: str, metric: str) -> float | None:
    return OPEN_METRICS[metric](answer, str(target))


ACCURACY_RULES = {"multiple_choice": _choice, "grounding": _grounding, "open_ended": _open}


def accuracy_reward(
    text: str,
    *,
    kind: str,
    target: Any,
    letters: str = "ABCD",
    letter_profile: str = "robust",
    open_metric: str = "f1",
) -> float | None:
    """R_acc of a final turn (or a bare answer); the score evaluation reports too. None when
    the gold cannot be read. Multiple choice: letter match; grounding: IoU of the first
    interval; open-ended: token F1 (or ``open_metric="exact"``).

    >>> accuracy_reward("<think>\\nIt is red.\\n</think>\\n<answer>(b)</answer>",
    ...                 kind="multiple_choice", target="B")
    1.0
    >>> accuracy_reward("12.4, 20.0.", kind="grounding", target=(12.4, 20.0))
    1.0
    >>> accuracy_reward("red red blue car", kind="open_ended", target="red red car")
    0.8571428571428571
    """
    if kind not in ACCURACY_RULES:
        raise ValueError(f"unknown question kind {kind!r}; known: {sorted(ACCURACY_RULES)}")
    return ACCURACY_RULES[kind](extract_answer(text), target, letters, letter_profile, open_metric)
