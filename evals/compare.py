"""Pair two runs of one task on their shared items: bootstrap CI, McNemar, category deltas."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.records import SampleLog, sample_from_json
from evals.results import score_records
from evals.spec import EvalSpec
from evals.stats import mcnemar_exact, paired_bootstrap
from evals.tasks import get_task


def compare_runs(
    run_a: Path, run_b: Path, *, profile: str = "official", n_resamples: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    """B against A on the items both scored, under one scorer profile."""
    spec_a, spec_b = (
        EvalSpec.from_json(json.loads((r / "spec.json").read_text())) for r in (run_a, run_b)
    )
    if spec_a.task != spec_b.task:
        raise ValueError(f"cannot compare a {spec_a.task} run with a {spec_b.task} run")
    task = get_task(spec_a.task)
    a, b = (
        {
            r["sample_id"]: r
            for r in score_records(task, list(SampleLog(run)), profile)
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
        return float(metrics[task.primary])

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
    return {
        "task": task.name,
        "profile": profile,
        "metric": task.primary,
        "run_a": str(run_a),
        "run_b": str(run_b),
        "n_items": len(shared),
        "n_clusters": boot["n_clusters"],
        "bootstrap": boot,
        "mcnemar": mcnemar,
        "categories": categories,
    }
