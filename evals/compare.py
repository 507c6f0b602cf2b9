"""Pair two runs of one task on their shared items: bootstrap CI, McNemar, category deltas.

Run A is the first folder given, run B the second. Every difference is B minus A (``delta``,
the CI, category deltas; ``p_b_better`` is the share of resamples where B scores higher;
McNemar's ``b01`` counts items A got wrong and B right). The report names each run by a
readable label (``evals.run_labels``), its spec hash and its folder, and states the
direction in ``direction``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.records import SampleLog, record_problem, sample_from_json
from evals.results import score_records
from evals.run_labels import label_runs, run_identity
from evals.spec import EvalSpec
from evals.stats import mcnemar_exact, paired_bootstrap
from evals.tasks import get_task

DIRECTION = "B - A"
"""The sign of every difference in a report: B's score minus A's."""


def compare_runs(
    run_a: Path,
    run_b: Path,
    *,
    profile: str | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, Any]:
    """B against A (differences are B minus A) on the items both scored, under one profile
    (None: the task's default)."""
    spec_a, spec_b = (
        EvalSpec.from_json(json.loads((r / "spec.json").read_text())) for r in (run_a, run_b)
    )
    if spec_a.task != spec_b.task:
        raise ValueError(f"cannot compare a {spec_a.task} run with a {spec_b.task} run")
    task = get_task(spec_a.task)
    profile = profile or task.default_profile
    a, b = (
        {
            r["sample_id"]: r
            for r in score_records(task, list(SampleLog(run, check=record_problem)), profile)
            if r["status"] == "ok"
        }
        for run in (run_a, run_b)
    )
    shared = sorted(set(a) & set(b))
    if not shared:
        raise ValueError(f"{run_a} and {run_b} share no scored items")
    samples = {i: sample_from_json(a[i]["sample"]) for i in shared}

    def primary(records: dict, ids: Sequence[str]) -> float:
        metrics = task.aggregate(
            [samples[i] for i in ids], [records[i]["metrics"] for i in ids], profile
        )
        return float(metrics[task.primary_for(profile)])

    boot = paired_bootstrap(
        {i: a[i]["metrics"]["score"] for i in shared},
        {i: b[i]["metrics"]["score"] for i in shared},
        {i: samples[i].cluster or i for i in shared},
        aggregate=lambda ids: (primary(a, ids), primary(b, ids)),
        n_resamples=n_resamples,
        seed=seed,
    )
    mcnemar = mcnemar_exact(
        {i: a[i]["metrics"]["score"] >= 0.5 for i in shared},
        {i: b[i]["metrics"]["score"] >= 0.5 for i in shared},
    )
    categories = []
    for field in task.category_fields:
        groups: dict[str, list[str]] = {}
        for i in shared:
            value = samples[i].categories.get(field)
            for v in value if isinstance(value, list) else [value]:
                if v is not None:
                    groups.setdefault(str(v), []).append(i)
        categories += [
            {"field": field, "value": v, "n": len(ids), "a": primary(a, ids), "b": primary(b, ids)}
            for v, ids in sorted(groups.items())
        ]
    label_a, label_b = label_runs([run_a, run_b])
    return {
        "task": task.name,
        "profile": profile,
        "metric": task.primary_for(profile),
        "a": run_identity(run_a, label_a),
        "b": run_identity(run_b, label_b),
        "direction": DIRECTION,
        "run_a": str(run_a),
        "run_b": str(run_b),
        "n_items": len(shared),
        "n_clusters": boot["n_clusters"],
        "bootstrap": boot,
        "mcnemar": mcnemar,
        "categories": categories,
    }


def header_lines(report: dict[str, Any]) -> list[str]:
    """The lines that open a printed comparison: which run is A, which is B, the direction.

    >>> report = {"a": {"label": "single", "spec_hash": "1a2b3c4d5e6f", "folder": "runs/x"},
    ...           "b": {"label": "verified", "spec_hash": None, "folder": "runs/y"}}
    >>> print("\\n".join(header_lines(report)))
    A: single  spec 1a2b3c4d5e6f  runs/x
    B: verified  spec (no spec.json)  runs/y
    differences are B - A: positive means B scores higher
    """
    lines = []
    for side in ("a", "b"):
        run = report[side]
        spec = run["spec_hash"] or "(no spec.json)"
        lines.append(f"{side.upper()}: {run['label']}  spec {spec}  {run['folder']}")
    return [*lines, f"differences are {DIRECTION}: positive means B scores higher"]
