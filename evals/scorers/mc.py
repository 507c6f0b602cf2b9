"""What the multiple-choice profiles share: read the reply as the harness does, extract a
letter with its rule, and the harnesses' common aggregates."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from agents.scoring.mcq_rules import paravt_letter
from agents.scoring.reply import VIEWS
from evals.sample import Sample
from evals.scorers.base import Profile, Scored

PARAVT_SOURCE = (
    "EvolvingLMMs-Lab/ParaVT@cf55249 paravt/eval/driver.py: _score; paravt/eval/utils.py: "
    "extract_letter, run_dataset"
)
LMMS_EVAL = "EvolvingLMMs-Lab/lmms-eval"


def pick(task: str, profiles: Mapping[str, Profile], name: str) -> Profile:
    """The named profile of ``task``; a ValueError naming the known ones otherwise."""
    try:
        return profiles[name]
    except KeyError:
        known = ", ".join(profiles)
        raise ValueError(f"{task} has no profile {name!r}; known: {known}") from None


def letter_item(reply: str, sample: Sample, profile: Profile, rule: Callable[[str], str]) -> Scored:
    """``correct`` (the letter equals the gold exactly) and ``answered`` (a letter was read)."""
    filtered = VIEWS[profile.reads](reply)
    letter = rule(filtered)
    correct = float(letter == sample.target)
    return Scored(
        {"score": correct, "correct": correct, "answered": float(bool(letter))}, filtered, letter
    )


def paravt_item(reply: str, sample: Sample, profile: Profile) -> Scored:
    """The ParaVT driver's ``_score`` for a multiple-choice item."""
    return letter_item(reply, sample, profile, paravt_letter)


def paravt_accuracy(metrics: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The driver's summary: correct over every multiple-choice result (0 with none)."""
    correct = [m["correct"] for m in metrics]
    return {
        "accuracy": sum(correct) / max(len(correct), 1) if correct else 0,
        "mcq_total": len(correct),
    }


def percent_of_all(metrics: Sequence[Mapping[str, float]], key: str = "correct") -> float:
    """lmms-eval's Video-MME-style total: 100 * correct / every item (0 with none)."""
    correct = int(sum(m[key] for m in metrics))
    return 100 * correct / len(metrics) if metrics else 0


def mean_of(metrics: Sequence[Mapping[str, float]], key: str) -> float:
    """lmms-eval's registered ``mean`` aggregation: sum / len."""
    values = [m[key] for m in metrics]
    return sum(values) / len(values)


def categories_of(sample: Sample, name: str) -> list[str]:
    value = sample.categories.get(name)
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]
