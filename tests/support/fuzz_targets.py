"""What the fuzzers feed: the parser, and every task's scorer under every profile.

Scorers are reached only through the public task interface (`TASKS[name].score`), on
generic samples of each kind, so the fuzzers need no change when a scorer is rewritten.
"""

from __future__ import annotations

import math
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from agents.protocol import parse
from evals.sample import Sample
from evals.tasks import TASKS

OPTIONS = ("A. red", "B. green", "C. blue", "D. yellow")
# Samples of every kind with the extras scorers read; a task is fuzzed with those of them
# it scores a plain reply on, so no scorer's own sample format is needed here.
CANDIDATES = (
    Sample(
        "mc",
        "/v.mp4",
        "Which colour?",
        "Which colour?",
        "multiple_choice",
        "B",
        OPTIONS,
        "c",
        {},
        {"target": {"letter": "B"}},
    ),
    Sample(
        "tg",
        "/v.mp4",
        "When?",
        "When?",
        "grounding",
        "12.0-30.0",
        (),
        "c",
        {},
        {"start": 12.0, "end": 30.0, "target": {"start": 12.0, "end": 30.0}},
    ),
    Sample(
        "oe",
        "/v.mp4",
        "What is shown?",
        "What is shown?",
        "open_ended",
        "a red circle",
        (),
        "c",
        {},
        {
            "target": {"answer": "a red circle"},
            "answers": ["a red circle"],
            "scoring_points": ["red", "circle"],
            "answer_as_written": "a red circle",
        },
    ),
    Sample(
        "num",
        "/d",
        "How many?",
        "How many?",
        "open_ended",
        "3",
        (),
        "c",
        {},
        {"answers": ["3"], "answer_as_written": "3"},
    ),
)
BENIGN = (
    "<answer>B</answer>",
    "The event happens in the 12 - 30 seconds",
    "a red circle",
    "3",
    "no idea",  # a reply a scorer cannot read: its own samples must still be scored
)


def accepted_samples(task, profile: str | None = None) -> tuple[list[Sample], dict[str, str]]:
    """The candidates the task scores every benign reply on under `profile`, and why each
    other one was refused (a sample of a kind the task has not, or a profile that needs
    more than a reply, such as a model judge)."""
    good, refused = [], {}
    for sample in CANDIDATES:
        try:
            for reply in BENIGN:
                task.score(reply, sample, profile or task.default_profile)
        except Exception as exc:
            refused[sample.id] = f"{type(exc).__name__}: {exc}"[:200]
            continue
        good.append(sample)
    return good, refused


def scorer_targets() -> dict[str, Callable[[str, int], Any] | None]:
    """'task/profile' -> f(reply, i): the score of the reply on one accepted sample (cyclic);
    None where the profile accepts none of the candidates."""
    targets = {}
    for name, task in sorted(TASKS.items()):
        for profile in task.profiles:
            samples, _ = accepted_samples(task, profile)

            def score(reply, i, task=task, samples=samples, profile=profile):
                return task.score(reply, samples[i % len(samples)], profile)

            targets[f"{name}/{profile}"] = score if samples else None
    return targets


def bad_metrics(scored: Any) -> bool:
    """A score whose metrics are not a mapping of finite numbers."""
    metrics = getattr(scored, "metrics", scored)
    if not isinstance(metrics, dict):
        return True
    return any(
        not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v)
        for v in metrics.values()
        if v is not None
    )


def fuzz(target: Callable[[str, int], Any], strings: Iterable[str], *, check=bad_metrics):
    """Run `target` on every string: (calls, exceptions by type, bad results, examples)."""
    calls, raised, bad, examples = 0, Counter(), 0, []
    for i, text in enumerate(strings):
        calls += 1
        try:
            result = target(text, i)
        except Exception as exc:  # counted, not raised: the figure is how many raise
            raised[type(exc).__name__] += 1
            if len(examples) < 3:
                examples.append({"input": text[:200], "error": traceback.format_exc(limit=2)})
            continue
        if check is not None and check(result):
            bad += 1
            if len(examples) < 3:
                examples.append({"input": text[:200], "result": repr(result)[:300]})
    return {"calls": calls, "raised": dict(raised), "bad_results": bad, "examples": examples}


def parser_target(text: str, i: int):
    return parse(text)


def bad_parse(turn: Any) -> bool:
    """A parse result that breaks the parser's contract (a `check` for `fuzz`)."""
    return not (
        isinstance(turn.violations, tuple | list)
        and isinstance(turn.tool_calls, tuple | list)
        and (turn.answer is None or isinstance(turn.answer, str))
    )
