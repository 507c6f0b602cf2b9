"""What a score is, and what a profile is; no task is imported here (tasks import this)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agents.scoring.extract import extract_answer


@dataclass(frozen=True)
class Scored:
    """One item's score under a profile, and why: what its harness read and extracted."""

    metrics: dict[str, float]  # per-item values, e.g. {"score": 1.0, "correct": 1.0}
    filtered: str  # the reply as the profile's harness reads it (lmms-eval's filtered_resps)
    extracted: Any  # what the rule read: a letter, [start, end], normalised text, or None


@dataclass(frozen=True)
class Profile:
    """How one reference harness scores a task: pinned to its source, exactly as it does it
    (its handling of the whole reply, its rule, its aggregation)."""

    source: str  # "repo@commit path: functions" (or "this project" for its own rules)
    reads: str  # agents.scoring.reply.VIEWS key: what the rule reads of the final reply
    primary: str  # the aggregate metric results lead with
    note: str = ""  # where the reproduction needed a decision, or a quirk users should know
    judge: bool = False  # a model judge reads every reply (score needs one)


_FINAL_RE = re.compile(r"^[*_#\s]*final\s+answer[*_\s]*:[*_\s]*", re.IGNORECASE)


def final_answer(response: str) -> tuple[str, bool]:
    """The answer text of a turn (``extract_answer``), without a leading ``Final Answer:``
    (any case, markdown emphasis allowed); and whether that prefix was there.

    >>> final_answer("The bars rise.\\n**Final Answer:** 42")
    ('42', True)
    >>> final_answer("<answer>final answer: Paris</answer>"), final_answer("Paris")
    (('Paris', True), ('Paris', False))
    """
    text = extract_answer(response)
    found = _FINAL_RE.match(text)
    return (text[found.end() :].strip(), True) if found else (text, False)
