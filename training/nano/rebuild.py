"""Rebuild paravt-nano from scratch: data, tokenizer and model, SFT, then GRPO and PARA-GRPO.

    python -m training.nano.rebuild --out build/nano            # the whole recipe
    python -m training.nano.rebuild --out build/nano --ship     # ... and copy it to assets/

Steps (each skipped when its output is already in OUT, so a killed rebuild resumes):

1. ``data/``: train-split needle videos in three noise tiers and the oracle's graph traces
   (``data/traces.jsonl``, the graph's trace format), with and without tools;
2. ``init/``: the tokenizer trained on the traces' text and the untrained Qwen3-VL;
3. ``sft/``: SFT on the oracle rows with the noise curriculum (``training.nano.train``);
4. ``grpo/`` and ``para_grpo/``: plain GRPO and PARA-GRPO from the SFT checkpoint on
   full-noise train videos (``training.grpo``), and ``dynamics.png``, their f_tau / kappa;
5. ``--ship``: the PARA-GRPO checkpoint becomes ``assets/paravt-nano``.

Deterministic by ``--seed`` (one process, fixed thread count, seeded sampling). The held-out
evaluation is a benchmark: ``python bench/nano_eval.py``.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from training.nano import data, model, train

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "assets" / "paravt-nano"
ARMS = ("grpo", "para_grpo")


def build_init(out: Path, rows: Callable[[], list[dict]], seed: int) -> Path:
    target = out / "init"
    if not (target / "model.safetensors").exists():
        model.build_nano(target, model.row_texts(rows()), seed=seed)
    return target


def run_sft(
    out: Path, init: Path, rows: Callable[[], list[dict]], schedule: train.SFTSchedule
) -> Path:
    target = out / "sft"
    if not (target / "model.safetensors").exists():
        train.train_sft(init, train.dedupe(rows()), target, schedule)
    return target


def run_grpo(out: Path, sft: Path, arm: str, *, steps: int, seed: int, threads: int) -> Path:
    """One GRPO arm from the SFT checkpoint; returns its checkpoint folder."""
    from training.grpo import RunConfig
    from training.grpo import train as grpo_train
    from training.para_grpo import ParaGRPOConfig

    target = out / arm
    if (target / "checkpoint" / "model.safetensors").exists():
        return target / "checkpoint"
    shutil.rmtree(target, ignore_errors=True)
    run = RunConfig(
        model=str(sft),
        out=str(target),
        data=str(out / "data" / "videos" / f"noise-{data.NOISE_TIERS[-1]:g}"),
        n_videos=0,
        steps=steps,
        prompts_per_step=2,
        threads=threads,
    )
    algo = ParaGRPOConfig(
        arm=arm,
        group_size=8,
        temperature=1.0,
        max_new_tokens=256,
        learning_rate=3e-5,
        kl_coef=0.0,
        frame_choices=(4, 8, 16),
        full_frames=4,
        seed=seed,
    )
    grpo_train(run, algo, data.benchmark_context(summary_max_tokens=48))
    return target / "checkpoint"


def plot_dynamics(out: Path) -> Path:
    from training.plot import main as plot_main

    figure = out / "dynamics.png"
    plot_main([*(str(out / arm / "grpo.jsonl") for arm in ARMS), "--out", str(figure)])
    return figure


def ship(checkpoint: Path, target: Path = SHIPPED) -> Path:
    """Copy the checkpoint's files (weights, tokenizer, processor) into `target`."""
    target.mkdir(parents=True, exist_ok=True)
    for path in checkpoint.iterdir():
        if path.is_file():
            shutil.copy2(path, target / path.name)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="Build folder (resumable).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--videos", type=int, default=1200, help="Train videos to generate.")
    parser.add_argument("--sft-steps", type=int, default=train.SFTSchedule.steps)
    parser.add_argument("--grpo-steps", type=int, default=12, help="Steps of each GRPO arm.")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--save-every", type=int, default=0, help="SFT step-N/ checkpoints.")
    parser.add_argument("--stop-after", choices=("data", "init", "sft", "grpo"), default=None)
    parser.add_argument("--ship", action="store_true", help=f"Copy the result to {SHIPPED}.")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    for noisy in ("httpx", "langgraph"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    began, timings = time.perf_counter(), {}

    def mark(name: str) -> bool:
        timings[name] = round(time.perf_counter() - began, 1)
        log.info("%s done at %.1f s", name, timings[name])
        return args.stop_after == name

    traces = data.build_traces(args.out / "data", args.videos)
    rows = functools.cache(lambda: data.sft_rows(traces))  # built only if a stage needs them
    if mark("data"):
        return 0
    init = build_init(args.out, rows, args.seed)
    if mark("init"):
        return 0
    schedule = replace(
        train.SFTSchedule(),
        steps=args.sft_steps,
        seed=args.seed,
        threads=args.threads,
        save_every=args.save_every,
    )
    sft = run_sft(args.out, init, rows, schedule)
    if mark("sft"):
        return 0
    final = None
    for arm in ARMS:
        final = run_grpo(
            args.out, sft, arm, steps=args.grpo_steps, seed=args.seed, threads=args.threads
        )
    plot_dynamics(args.out)
    mark("grpo")
    (args.out / "timings.json").write_text(json.dumps(timings, indent=2) + "\n")
    if args.ship:
        print(ship(final))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
