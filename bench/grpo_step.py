"""GRPO step time of the tiny Qwen3-VL on the CPU, and what PARA-GRPO's bookkeeping costs.

Two engines from the same initial weights take turns, one step each: arm ``grpo`` (plain:
no Think Prefix, no anchor terms, no gating) and arm ``para_grpo``. Both see the same
prompts and the same overview frame count (gating draws from a single choice), so they do
the same model work and differ only in bookkeeping. Measured per step:

- ``step_time_s`` of each arm (median over the timed steps) and their ratio;
- the bookkeeping itself, timed inside the PARA-GRPO steps by wrapping the functions that do
  it: the gating draw and Context (``ParaGRPOConfig.rollout_context``), trajectory building
  from traces (``rollout.build_trajectory``: record look-up, turn split), the reward parts
  (``para_grpo.trace_reward``), the objective, group advantages and the logged metrics
  (f_tau, kappa, ...), plus the loss masks of every turn (``Turn.loss_mask``, built once
  afterwards). All of it is counted, also what
  plain GRPO needs too, so the share is an upper bound. Target: at most 10% of a step.

    python bench/grpo_step.py [--steps 5]   # writes bench/grpo_step.json
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from graphs.context import Context  # noqa: E402
from serving.tiny_model import build_tiny_model  # noqa: E402
from training import advantages, rollout  # noqa: E402
from training import cpu_grpo as grpo  # noqa: E402
from training.cpu_grpo import GRPOEngine, RunConfig  # noqa: E402
from training.para_grpo import ParaGRPOConfig  # noqa: E402
from training.rollout import needle_prompts  # noqa: E402

SPENT: dict[str, float] = defaultdict(float)
BATCH: list = []  # the trajectories of the last step (captured on their way to the metrics)


def timed(name: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        began = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[name] += time.perf_counter() - began

    return wrapper


def instrument() -> None:
    """Wrap every bookkeeping function where the engine looks it up."""
    ParaGRPOConfig.rollout_context = timed("gating", ParaGRPOConfig.rollout_context)
    rollout.build_trajectory = timed("trajectories", rollout.build_trajectory)
    grpo.trace_reward = timed("reward_parts", grpo.trace_reward)
    grpo.rewards_tensor = timed("advantages", advantages.rewards_tensor)
    grpo.group_advantages = timed("advantages", advantages.group_advantages)
    for name, fn in list(grpo.OBJECTIVES.items()):
        grpo.OBJECTIVES[name] = timed("objective", fn)
    metrics = grpo.rollout_metrics

    def capture(trajectories):
        BATCH[:] = trajectories
        return metrics(trajectories)

    grpo.rollout_metrics = timed("metrics", capture)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5, help="Timed steps per arm")
    parser.add_argument("--frames", type=int, default=8, help="Overview frames (both arms)")
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--prompts-per-step", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(1)
    work = Path(tempfile.mkdtemp(prefix="paravt-grpo-bench-"))
    model = build_tiny_model(work / "model", seed=0)
    needle_prompts(work / "data", n_videos=2, duration=60.0)
    context = Context(crop_max_frames=4, summary_max_tokens=16, max_turns=1)
    engines = {}
    for arm in ("grpo", "para_grpo"):
        run = RunConfig(
            model=str(model),
            out=str(work / arm),
            data=str(work / "data"),
            prompts_per_step=args.prompts_per_step,
        )
        algo = ParaGRPOConfig(
            arm=arm,
            group_size=args.group_size,
            max_new_tokens=args.max_new_tokens,
            frame_choices=(args.frames,),
            full_frames=args.frames,
            learning_rate=1e-4,
        )
        engines[arm] = GRPOEngine(run, algo, context)
    instrument()
    steps: dict[str, list[dict]] = {arm: [] for arm in engines}
    bookkeeping: list[dict[str, float]] = []
    for step in range(args.steps + 1):  # step 0 warms up (frame cache, allocator)
        for arm, engine in engines.items():
            SPENT.clear()
            line = asyncio.run(engine.step(step))
            if arm == "para_grpo":
                began = time.perf_counter()
                for t in BATCH:
                    _ = [turn.loss_mask for turn in t.trained_turns()]
                SPENT["masks"] += time.perf_counter() - began
                if step:
                    bookkeeping.append(dict(SPENT))
            if step:
                steps[arm].append(line)
            print(arm, step, line["step_time_s"], dict(SPENT), flush=True)
    for engine in engines.values():
        engine.close()

    def median(arm: str, key: str) -> float:
        return round(statistics.median(line[key] for line in steps[arm]), 4)

    plain, para = median("grpo", "step_time_s"), median("para_grpo", "step_time_s")
    per_step = [sum(b.values()) for b in bookkeeping]
    parts = {
        k: round(statistics.median(b.get(k, 0.0) for b in bookkeeping) * 1e3, 3)
        for k in sorted({k for b in bookkeeping for k in b})
    }
    result = {
        "what": "GRPO step on the tiny Qwen3-VL, CPU, 1 torch thread; arms grpo vs para_grpo "
        "with the same prompts and frame count; bookkeeping timed inside para_grpo steps",
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "torch": torch.__version__,
        },
        "settings": {
            "timed_steps": args.steps,
            "group_size": args.group_size,
            "prompts_per_step": args.prompts_per_step,
            "rollouts_per_step": args.group_size * args.prompts_per_step,
            "overview_frames": args.frames,
            "overview_max_pixels": context.overview_max_pixels,
            "max_new_tokens": args.max_new_tokens,
            "kl_coef": 0.01,
            "max_turns": 1,
        },
        "median_step_time_s": {"grpo": plain, "para_grpo": para},
        "median_phase_s": {
            arm: {k: median(arm, k) for k in ("time_rollout_s", "time_reward_s", "time_update_s")}
            for arm in steps
        },
        "step_time_ratio_para_over_grpo": round(para / plain, 4),
        "bookkeeping_ms_per_step_median": round(statistics.median(per_step) * 1e3, 3),
        "bookkeeping_ms_by_part_median": parts,
        "bookkeeping_share_of_grpo_step": round(statistics.median(per_step) / plain, 5),
        "target_share": 0.10,
    }
    result["within_target"] = result["bookkeeping_share_of_grpo_step"] <= result["target_share"]
    out = Path(__file__).with_suffix(".json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
