"""Turn scored sample records into a results document: metrics, errors, breakdowns, costs."""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.costs import run_costs
from evals.records import sample_from_json
from evals.sample import Sample
from evals.spec import EvalSpec
from evals.stats import ci95, clustered_se, mean_with_se
from evals.tasks.base import Task

PACKAGES = ("paravt-graph", "langgraph", "openai", "av", "transformers", "torch")


def score_records(
    task: Task, records: Sequence[Mapping[str, Any]], profile: str | None
) -> list[dict]:
    """Score saved replies with a profile (no model call), in doc order as the profile's
    harness would: the records, updated with its metrics, filtered reply and extraction
    (``profile`` None: the task's default)."""
    profile = profile or task.default_profile
    done = sorted((r for r in records if r["status"] == "ok"), key=lambda r: r["doc_id"])
    samples = [sample_from_json(r["sample"]) for r in done]
    scored = task.score_in_order([r["resps"][0] for r in done], samples, profile)
    by_id = {
        r["sample_id"]: {
            **r,
            "metrics": s.metrics,
            "filtered_resps": [s.filtered],
            "extracted": s.extracted,
            "profile": profile,
        }
        for r, s in zip(done, scored, strict=True)
    }
    return [by_id.get(r["sample_id"], dict(r)) for r in records]


def summarize(
    task: Task,
    spec: EvalSpec,
    records: Sequence[Mapping[str, Any]],
    profile: str,
    *,
    skipped_records: Sequence[str] = (),
    missing_media: Sequence[str] = (),
) -> dict[str, Any]:
    ok = [r for r in records if r["status"] == "ok"]
    errors = [r for r in records if r["status"] != "ok"]
    samples = [sample_from_json(r["sample"]) for r in ok]
    metrics = [r["metrics"] for r in ok]
    return {
        "task": task.name,
        "profile": profile,
        "spec": spec.to_json(),
        "spec_hash": spec.hash,
        "metrics": task.aggregate(samples, metrics, profile) if ok else {},
        "per_item": per_item_stats(samples, metrics),
        "by_category": by_category(task, samples, metrics, profile),
        "counts": {
            "samples": len(records),
            "scored": len(ok),
            "errors": len(errors),
            "skipped_records": len(skipped_records),
            "skipped_missing_media": len(missing_media),
        },
        "errors": [{"sample_id": r["sample_id"], "error": r["error"]} for r in errors],
        "skipped_records": list(skipped_records),
        "skipped_missing_media": list(missing_media),
        "costs": run_costs(r["cost"] for r in ok if r.get("cost")),
        "versions": versions(),
        "git": git_hash(),
        "written_at": time.time(),
    }


def per_item_stats(samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]]) -> dict:
    """Mean, standard error, clustered standard error (by video) and 95% CI per metric."""
    keys = set.intersection(*(set(m) for m in metrics)) if metrics else set()
    clusters = [s.cluster or s.id for s in samples]
    stats = {}
    for key in sorted(keys):
        values = [float(m[key]) for m in metrics]
        mean, se = mean_with_se(values)
        cse = clustered_se(values, clusters)
        low, high = ci95(mean, cse)
        stats[key] = {
            "mean": mean,
            "se": se,
            "clustered_se": cse,
            "ci95": [low, high],
            "n": len(values),
            "clusters": len(set(clusters)),
        }
    return stats


def by_category(
    task: Task, samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str
) -> dict[str, dict[str, Any]]:
    """The task's aggregate per category value; a list-valued field counts in each value."""
    out: dict[str, dict[str, Any]] = {}
    for name in task.category_fields:
        groups: dict[str, list[int]] = defaultdict(list)
        for i, sample in enumerate(samples):
            value = sample.categories.get(name)
            for v in value if isinstance(value, list) else [value]:
                if v is not None:
                    groups[str(v)].append(i)
        out[name] = {
            value: {
                "n": len(idx),
                **task.aggregate([samples[i] for i in idx], [metrics[i] for i in idx], profile),
            }
            for value, idx in sorted(groups.items())
        }
    return out


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def git_hash() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None
