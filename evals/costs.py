"""Cost of a sample (from its trace) and of a run: tokens, frames, calls, tool use, format."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agents.scoring.length import answer_length
from graphs.runs.traces import call_role


def sample_cost(trace: Mapping[str, Any], wall_s: float) -> dict[str, Any]:
    """What one sample cost; every frame is counted each time a request encodes it."""
    calls = trace["model_calls"]
    main = [c for c in calls if call_role(c) == "main"]
    overview = len(trace["overview"]["timestamps"]) if trace.get("overview") else 0
    frames_main = sum(c["frames_encoded"] for c in main)
    violations = trace.get("violations", [])
    return {
        **trace["cost"],
        "frames_overview": overview * len(main),  # the overview is re-sent every main turn
        "frames_crops": trace["cost"]["frames_encoded"] - overview * len(main),
        "frames_main": frames_main,
        "main_turns": len(main),
        "subagent_calls": len(calls) - len(main),
        "used_tools": bool(trace["tool_calls"]),
        "well_formed_turns": sum(1 for v in violations if not v),
        "answer_tokens": answer_length(trace.get("answer") or "").tokens,
        "wall_s": round(wall_s, 3),
    }


def sum_costs(costs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Several runs of one sample (majority voting) cost their sum; wall time is shared."""
    if len(costs) == 1:
        return dict(costs[0])
    total: dict[str, Any] = {}
    for key, value in costs[0].items():
        values = [c[key] for c in costs]
        if key == "wall_s":
            total[key] = value
        elif isinstance(value, bool):
            total[key] = any(values)
        elif key == "image_tokens":
            total[key] = None if any(v is None for v in values) else sum(values)
        elif isinstance(value, (int, float)):
            total[key] = sum(values)
        else:
            total[key] = value
    return total


def run_costs(costs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Totals and per-sample means; kappa is the share of samples with at least one call."""
    costs = list(costs)
    n = len(costs)
    if n == 0:
        return {"samples": 0}
    total = {
        key: sum(c[key] or 0 for c in costs)
        for key in (
            "prompt_tokens",
            "completion_tokens",
            "frames_encoded",
            "frames_overview",
            "frames_crops",
            "model_calls",
            "tool_calls",
            "main_turns",
            "wall_s",
        )
    }
    image = [c["image_tokens"] for c in costs if c.get("image_tokens") is not None]
    turns = total["main_turns"]
    return {
        "samples": n,
        "totals": {**total, "image_tokens": sum(image) if image else None},
        "per_sample": {key: round(value / n, 3) for key, value in total.items()},
        "tool_use_rate_kappa": round(sum(c["used_tools"] for c in costs) / n, 4),
        "calls_per_sample": round(total["tool_calls"] / n, 3),
        "answer_tokens_mean": round(sum(c.get("answer_tokens", 0) for c in costs) / n, 2),
        "format_validity": round(sum(c["well_formed_turns"] for c in costs) / turns, 4)
        if turns
        else None,
    }
