"""LongVideoBench (val) scoring. Its only reference harness is lmms-eval's task
(``lmms_eval/tasks/longvideobench/utils.py``, identical at 2c08ee5 and 75571cf):

- ``lmms_eval``: reasoning stripped; eight answer prefixes removed; the first capital A-E
  (E even on a four-option item); a reply with none gets a random letter among the item's
  options, as the LongVideoBench authors' evaluation did. lmms-eval seeds Python's
  ``random`` once per run (``--seed``, 0 by default), so its guesses depend on the order
  in which items are scored: :func:`score_all` reproduces a fresh run scored in doc order
  with seed 0 (the results and ``eval rescore`` use it); :func:`score` alone cannot know an
  item's place and guesses with a fresh seed-0 generator. ``lvb_acc`` is the overall
  accuracy computed the way the task does (over its duration-group and category subsets),
  rounded to 5 decimals.
- ``lmms_eval_no_guess`` (the default, as reference/benchmarks.md asks): the same rule,
  but a reply with no letter counts wrong instead of guessing; the same aggregate.
- ``paravt``: the ParaVT release driver (ParaVT@cf55249).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from agents.scoring.mcq_rules import lvb_parse
from agents.scoring.reply import VIEWS
from evals.sample import Sample
from evals.scorers.base import Profile, Scored
from evals.scorers.mc import LMMS_EVAL, PARAVT_SOURCE, paravt_accuracy, paravt_item, pick

SOURCE = f"{LMMS_EVAL}@75571cf lmms_eval/tasks/longvideobench/utils.py (same at 2c08ee5)"
PROFILES = {
    "lmms_eval": Profile(
        SOURCE,
        "lmms_eval",
        "lvb_acc",
        "random guesses drawn as a fresh run with --seed 0 scored in doc order",
    ),
    "lmms_eval_no_guess": Profile(
        SOURCE + ", without the random guess",
        "lmms_eval",
        "lvb_acc",
        "this project's variant: an unparsed reply counts wrong",
    ),
    "paravt": Profile(PARAVT_SOURCE, "as_is", "accuracy"),
}
DEFAULT = "lmms_eval_no_guess"
SEED = 0  # lmms-eval's default --seed for Python's random


def _profile(name: str) -> Profile:
    return pick("longvideobench", PROFILES, name)


def _item(reply: str, sample: Sample, profile: str, rng: random.Random | None) -> Scored:
    spec = _profile(profile)
    if profile == "paravt":
        return paravt_item(reply, sample, spec)
    filtered = VIEWS[spec.reads](reply)
    letter, guessed = lvb_parse(filtered, len(sample.options), rng)
    correct = float(letter == sample.target)
    answered = float(bool(letter) and not guessed)
    metrics = {
        "score": correct,
        "correct": correct,
        "answered": answered,
        "random_guess": float(guessed),
    }
    return Scored(metrics, filtered, letter)


def score(reply: str, sample: Sample, profile: str = DEFAULT) -> Scored:
    """One item (a guess, under ``lmms_eval``, from a fresh seed-0 generator).

    >>> s = Sample("86CxyhFV9MI_0", "", "q", "p", "multiple_choice", "E",
    ...            options=("A. a", "B. b", "C. c", "D. d", "E. e"))
    >>> score("<think>Not D.</think><answer>E</answer>", s).metrics["correct"]
    1.0
    >>> score("no idea", s).extracted, score("no idea", s, "lmms_eval").metrics["random_guess"]
    ('', 1.0)
    """
    return _item(reply, sample, profile, random.Random(SEED) if profile == "lmms_eval" else None)


def score_all(replies: Sequence[str], samples: Sequence[Sample], profile: str) -> list[Scored]:
    """Every item in doc order; under ``lmms_eval`` the guesses come from one generator
    seeded once, as in a fresh lmms-eval run."""
    rng = random.Random(SEED) if profile == "lmms_eval" else None
    return [_item(r, s, profile, rng) for r, s in zip(replies, samples, strict=True)]


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = DEFAULT
) -> dict[str, float]:
    """``lvb_acc`` as the task computes it, with ``answered`` and ``random_guesses`` shares;
    ParaVT's ``accuracy`` for ``paravt``."""
    _profile(profile)
    if profile == "paravt":
        return paravt_accuracy(metrics)
    subsets: dict[str, list[float]] = {}
    for sample, item in zip(samples, metrics, strict=True):
        for name in ("duration_group", "question_category"):
            value = sample.categories.get(name)
            subsets.setdefault(f"{name}={value}", []).append(item["correct"])
    weighted, count = 0.0, 0
    for values in subsets.values():
        weighted += sum(1 for v in values if v) / len(values) * len(values)
        count += len(values)
    n = len(metrics)
    return {
        "lvb_acc": round(weighted / count, 5) if count else 0,
        "answered": sum(m["answered"] for m in metrics) / n if n else 0,
        "random_guesses": sum(m.get("random_guess", 0.0) for m in metrics) / n if n else 0,
    }
