"""Cost-accuracy Pareto analysis over runs: per-sample cost with vision counted, the front, a plot.

Cost of a run (``cost_breakdown``) is tokens per sample, from the ``costs`` block of its
results file (``evals.costs.run_costs``: per-call usage summed over every model call, so an
image encoded in three turns, or by two agents, is paid three times or twice):

    cost = text_in + completion + image_token_weight * image

- ``image`` is the server's image tokens per sample (``totals.image_tokens / samples``); when
  the server reported none, ``frames_encoded`` per sample times an assumed tokens-per-frame
  (``frame_tokens``, default :data:`DEFAULT_FRAME_TOKENS`). Which one was used is recorded in
  the breakdown's ``image_source`` and in each :class:`Point`'s ``cost_basis``.
- ``text_in`` is ``prompt_tokens - image`` (floored at 0), because OpenAI-style usage counts
  the image tokens inside ``prompt_tokens`` (our server does: ``serving/server.py`` reports
  ``len(input_ids)`` with the image placeholders expanded, and ``image_tokens`` as a detail).
  At weight 1 the cost is then simply ``prompt + completion``; the weight prices vision apart.
  Pass ``prompt_includes_images=False`` for a server whose ``prompt_tokens`` are text only;
  the image tokens are then added on top.

Each point is named by its run's readable label (``evals.run_labels``: the board-study
configuration, else the settings that set it apart), and keeps its folder (task and spec hash)
in ``run``; ``metric`` names what its y value is (the task's primary metric by default,
e.g. ``mean_score``), and the table and plot use that name, not "accuracy".

Front (``pareto_front``): minimise cost, maximise accuracy. A point is dominated when another
costs no more and scores no less, and is strictly better in one of the two. Ties: points with
identical cost and accuracy do not dominate each other, so all of them stay on the front; a
point with the same cost and lower accuracy (or the same accuracy and a higher cost) is
dominated. Points with a non-finite cost or accuracy (a run with no scored items) are on no
front and dominated by nothing; ``table`` shows them with ``on_front`` False.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.run_labels import label_runs

DEFAULT_FRAME_TOKENS = 49
"""Assumed visual tokens per encoded frame when the server reports none: one frame at the
graph's default 50,176-pixel budget (224x224) is 7x7 merged patches of 32x32 pixels in
Qwen3-VL (16-pixel patches, 2x2 merge), i.e. 49 tokens, as the local server reports."""


@dataclass(frozen=True)
class Point:
    """One configuration: its name, cost (tokens per sample) and score on ``metric``
    (``accuracy`` holds that score whatever the metric is; higher is better)."""

    name: str
    cost: float
    accuracy: float
    cost_basis: str = ""  # how cost was counted, e.g. "image tokens reported"
    metric: str = ""  # the metric ``accuracy`` holds, e.g. "mean_score"
    run: str = ""  # the run folder's name (task and spec hash), e.g. "needle-1a2b3c4d5e6f"

    @property
    def valid(self) -> bool:
        return math.isfinite(self.cost) and math.isfinite(self.accuracy)


def dominates(a: Point, b: Point) -> bool:
    """Whether ``a`` is at least as cheap and as accurate as ``b``, and strictly better once.

    >>> cheap, dear, twin = Point("a", 10, 0.5), Point("b", 20, 0.5), Point("c", 10, 0.5)
    >>> dominates(cheap, dear), dominates(cheap, twin)
    (True, False)
    """
    no_worse = a.cost <= b.cost and a.accuracy >= b.accuracy
    return no_worse and (a.cost < b.cost or a.accuracy > b.accuracy)


def pareto_front(points: Iterable[Point]) -> list[Point]:
    """The non-dominated valid points, by cost (then accuracy, highest first; then name).

    >>> pts = [Point("a", 100, 0.5), Point("b", 200, 0.4), Point("c", 300, 0.7)]
    >>> [p.name for p in pareto_front(pts)]
    ['a', 'c']
    """
    valid = [p for p in points if p.valid]
    front = [p for p in valid if not any(dominates(q, p) for q in valid)]
    return sorted(front, key=lambda p: (p.cost, -p.accuracy, p.name))


def dominated(points: Iterable[Point]) -> list[Point]:
    """The valid points that some other point dominates, in input order.

    >>> [p.name for p in dominated([Point("a", 100, 0.5), Point("b", 200, 0.4)])]
    ['b']
    """
    valid = [p for p in points if p.valid]
    return [p for p in valid if any(dominates(q, p) for q in valid)]


# ----------------------------------------------------------------------------- cost


def cost_breakdown(
    results: Mapping[str, Any],
    *,
    image_token_weight: float = 1.0,
    frame_tokens: float | None = None,
    prompt_includes_images: bool = True,
) -> dict[str, Any]:
    """Per-sample text, completion and image tokens of a results document, and the cost.

    >>> costs = {"samples": 2, "totals": {"image_tokens": 200},
    ...          "per_sample": {"prompt_tokens": 150, "completion_tokens": 20, "frames_encoded": 2}}
    >>> b = cost_breakdown({"costs": costs}, image_token_weight=2.0)
    >>> b["text_in"], b["image"], b["cost"], b["image_source"]
    (50.0, 100.0, 270.0, 'reported')
    """
    costs = results.get("costs") or {}
    n = costs.get("samples") or 0
    if n <= 0:
        raise ValueError("the run has no scored samples, so no cost")
    try:
        per = costs["per_sample"]
        prompt, completion = float(per["prompt_tokens"]), float(per["completion_tokens"])
    except KeyError as err:
        raise KeyError(f"results costs lack per-sample {err}; re-summarise the run") from None
    reported = (costs.get("totals") or {}).get("image_tokens")
    if reported is not None:
        image, source, per_frame = float(reported) / n, "reported", None
    else:
        per_frame = float(DEFAULT_FRAME_TOKENS if frame_tokens is None else frame_tokens)
        image = float(per.get("frames_encoded") or 0.0) * per_frame
        source = "assumed"
    text_in = max(prompt - image, 0.0) if prompt_includes_images else prompt
    return {
        "text_in": text_in,
        "completion": completion,
        "image": image,
        "image_source": source,  # "reported" (server image tokens) or "assumed" (frames)
        "frame_tokens": per_frame,  # tokens per frame assumed; None when reported
        "image_token_weight": image_token_weight,
        "prompt_includes_images": prompt_includes_images,
        "cost": text_in + completion + image_token_weight * image,
    }


def total_cost(
    results: Mapping[str, Any],
    *,
    image_token_weight: float = 1.0,
    frame_tokens: float | None = None,
    prompt_includes_images: bool = True,
) -> float:
    """Tokens per sample with every image encoding counted (see the module docstring)."""
    return cost_breakdown(
        results,
        image_token_weight=image_token_weight,
        frame_tokens=frame_tokens,
        prompt_includes_images=prompt_includes_images,
    )["cost"]


def _basis(breakdown: Mapping[str, Any]) -> str:
    if breakdown["image_source"] == "reported":
        text = "image tokens reported"
    else:
        text = f"frames x {breakdown['frame_tokens']:g} tokens (assumed)"
    if breakdown["image_token_weight"] != 1.0:
        text += f", image weight {breakdown['image_token_weight']:g}"
    return text


def load_points(
    run_dirs: Iterable[str | Path],
    profile: str | None = None,
    *,
    metric: str | None = None,
    image_token_weight: float = 1.0,
    frame_tokens: float | None = None,
    prompt_includes_images: bool = True,
) -> list[Point]:
    """One point per run folder from its ``results_<profile>.json`` (None: each task's default
    profile): a readable label (``evals.run_labels.label_runs``), the cost, and
    ``metrics[metric]`` (default: the profile's primary metric; NaN when absent)."""
    from evals.tasks import get_task  # the registry imports every task module

    run_dirs = [Path(r) for r in run_dirs]
    points = []
    for run_dir, label in zip(run_dirs, label_runs(run_dirs), strict=True):
        name = profile or _default_profile(run_dir)
        path = run_dir / f"results_{name}.json"
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found: score the run with profile {name!r}")
        results = json.loads(path.read_text(encoding="utf-8"))
        key = metric or get_task(results["task"]).primary_for(name)
        value = results.get("metrics", {}).get(key)
        breakdown = cost_breakdown(
            results,
            image_token_weight=image_token_weight,
            frame_tokens=frame_tokens,
            prompt_includes_images=prompt_includes_images,
        )
        accuracy = math.nan if value is None else float(value)
        basis = _basis(breakdown)
        points.append(Point(label, breakdown["cost"], accuracy, basis, key, run_dir.name))
    return points


# ----------------------------------------------------------------------------- reports


def table(points: Sequence[Point]) -> list[dict[str, Any]]:
    """One row per point, cheapest first: name, run folder, cost, accuracy (the score on
    ``metric``), on_front, and for a dominated point the cheapest front point that dominates
    it (``dominated_by``)."""
    front = pareto_front(points)
    on_front = {id(p) for p in front}
    rows = []
    for p in sorted(points, key=lambda p: (p.cost, -p.accuracy, p.name)):
        by = next((q.name for q in front if p.valid and dominates(q, p)), None)
        rows.append(
            {
                "name": p.name,
                "run": p.run,
                "cost": p.cost,
                "accuracy": p.accuracy,
                "metric": p.metric,
                "on_front": id(p) in on_front,
                "dominated_by": by,
                "cost_basis": p.cost_basis,
            }
        )
    return rows


def metric_name(points: Sequence[Point]) -> str:
    """What the points' scores are, for a column or axis: their metric, or the metrics joined
    by " / " when runs of several tasks are shown together ("score" when none is named).

    >>> metric_name([Point("a", 1, 0.5, metric="mean_score")]), metric_name([Point("b", 1, 0.5)])
    ('mean_score', 'score')
    """
    names = list(dict.fromkeys(p.metric for p in points if p.metric))
    return " / ".join(names) or "score"


def markdown_table(points: Sequence[Point]) -> str:
    """The table as GitHub markdown, the score column headed by the metric's name.

    >>> solo = Point("solo", 1200, 0.139, metric="mean_score", run="needle-1a2b3c4d5e6f")
    >>> print(markdown_table([solo, Point("naive board", 2500, 0.081, metric="mean_score")]))
    | run | folder | cost (tokens/sample) | mean_score | Pareto front | cost basis |
    |---|---|---:|---:|---|---|
    | solo | needle-1a2b3c4d5e6f | 1,200 | 0.139 | yes |  |
    | naive board |  | 2,500 | 0.081 | no (solo) |  |
    """
    header = f"| run | folder | cost (tokens/sample) | {metric_name(points)} | Pareto front |"
    lines = [header + " cost basis |", "|---|---|---:|---:|---|---|"]
    for row in table(points):
        front = "yes" if row["on_front"] else f"no ({row['dominated_by']})"
        if not row["on_front"] and row["dominated_by"] is None:
            front = "no (invalid)"
        cells = [
            row["name"].replace("|", "\\|"),
            row["run"].replace("|", "\\|"),
            f"{row['cost']:,.0f}" if math.isfinite(row["cost"]) else "n/a",
            f"{row['accuracy']:.3f}" if math.isfinite(row["accuracy"]) else "n/a",
            front.replace("|", "\\|"),
            row["cost_basis"],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _default_profile(run_dir: Path) -> str:
    """The default profile of the run's task (its spec names the task); for a folder without a
    spec, the profile of its only results file."""
    from evals.tasks import get_task

    spec = run_dir / "spec.json"
    if spec.is_file():
        return get_task(json.loads(spec.read_text(encoding="utf-8"))["task"]).default_profile
    found = sorted(run_dir.glob("results_*.json"))
    if len(found) != 1:
        raise FileNotFoundError(f"{spec} not found: pass the scorer profile with --profile")
    return found[0].stem.removeprefix("results_")
