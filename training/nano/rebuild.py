"""Rebuild paravt-nano from scratch: data, tokenizer and model, SFT, then GRPO and PARA-GRPO.

    python -m training.nano.rebuild --out build/nano            # the whole recipe
    python -m training.nano.rebuild --out build/nano --ship     # ... and copy it to assets/

Steps (each skipped when its output is already in OUT, so a killed rebuild resumes):

1. ``data/``: train-split needle videos in three noise tiers and the oracle's graph traces
   (``data/traces.jsonl``, the graph's trace format), with and without tools; traces already
   there are reused only if they were made for the questions this rebuild asks;
2. ``init/``: the tokenizer trained on the rows' text and the untrained Qwen3-VL; with
   ``--base``, the base with the whole tokens its tokenizer lacks (``training.nano.extend``:
   the verdicts, and with ``--spaced-seconds`` every whole second after a space);
3. ``sft/``: SFT on the oracle rows and on note-to-answer rows made from train-split plans
   (``training.nano.notes``), with the noise curriculum (``training.nano.train``); a killed
   SFT goes on from its last resume point (``training.nano.resume``), not from step 0;
   with ``--polish-steps``, ``polish/``: that many more SFT steps from ``sft/``'s checkpoint
   in the mix of ``--polish-shares``, on the rows already built (the same schedule as a
   second rebuild from ``sft/``, though not its weights bit for bit: a second training in
   one process rounds as a fresh one need not);
4. ``grpo/`` and ``para_grpo/``: plain GRPO and PARA-GRPO from the SFT checkpoint on
   full-noise train videos (``training.cpu_grpo``), and ``dynamics.png``, their f_tau / kappa
   (and accuracy) per step; with 2 threads or more the two arms run side by side, one
   process and one thread each;
5. ``--ship``: the PARA-GRPO checkpoint becomes ``assets/paravt-nano``.

Every checkpoint folder records the regime it was trained for (``regime.json``,
``serving.regime``: overview frame counts, frame size, crop frames, token caps), which the
server shows and ``graphs.regime`` fills runs from.

Deterministic by ``--seed`` (fixed thread count per process, seeded sampling). The held-out
evaluation is a benchmark: ``python bench/nano_eval.py``.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from agents import benchmark
from serving.regime import Regime, write_regime
from training.nano import (
    data,
    extend,
    model,
    notes,
    off_topic,
    rebuild_args,
    resume,
    stage_records,
    train,
)

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "assets" / "paravt-nano"
ARMS = ("grpo", "para_grpo")
#: Token caps of the runs it is trained for (bench/nano_eval.py and the demo use the same).
MAX_NEW_TOKENS, SUMMARY_MAX_TOKENS = 256, 48
#: What the rebuilt model is trained for, recorded beside its weights.
REGIME = Regime(
    overview_frames=tuple(sorted(set(data.OVERVIEW_FRAMES))),
    default_overview_frames=benchmark.GRAPH_SETTINGS["overview_frames"],
    frame_width=benchmark.WIDTH,
    frame_height=benchmark.HEIGHT,
    crop_max_frames=benchmark.GRAPH_SETTINGS["crop_max_frames"],
    max_parallel=benchmark.GRAPH_SETTINGS["max_parallel"],
    max_new_tokens=MAX_NEW_TOKENS,
    summary_max_tokens=SUMMARY_MAX_TOKENS,
    trained_on="the needle benchmark's train split (agents/benchmark.py): 1-10 minute videos "
    "at 1 fps, 128x96, oracle traces of the graph, then SFT (and GRPO for the grpo/ and "
    "para_grpo/ checkpoints)",
)


def build_init(out: Path, rows: Callable[[], list[dict]], seed: int) -> Path:
    target = out / "init"
    if not (target / "model.safetensors").exists():
        model.build_nano(target, model.row_texts(rows()), seed=seed)
    return target


#: Beside a finished SFT stage: what it was trained from (:func:`run_sft`).
TRAINED_FROM = "trained_from.json"
#: The command line's settings that decide which rows a stage trains on.
ROW_SETTINGS = (
    "videos",
    "note_seeds",
    "phrased",
    "every_needle_grounded",
    "second_looks",
    "off_topic",
)


def run_sft(
    out: Path,
    init: Path,
    rows: Callable[[], list[dict]],
    schedule: train.SFTSchedule,
    name: str = "sft",
    rows_made_by: dict | None = None,
) -> Path:
    """SFT from `init` on `rows()` (the caller deduplicates them) into ``out/name``, unless
    it is there already, trained from the same `init`, schedule and `rows_made_by` (the
    settings that make the rows) (else ResumeRefused: a stage of another run is never
    shipped as this one's)."""
    target, record = out / name, out / name / TRAINED_FROM
    made_from = {
        "init_weights_sha256": extend.weights_sha256(init),
        "schedule": resume.fingerprint(schedule, rows=0)["schedule"],
        "rows_made_by": rows_made_by or {},
    }
    if (target / "model.safetensors").exists():
        if stage_records.recorded(record) != made_from:
            raise resume.ResumeRefused(
                f"{target} was trained from another start or schedule than this run's: "
                "remove it, or give another --out, to train it again"
            )
        return target
    train.train_sft(init, rows(), target, schedule)
    write_regime(target, REGIME)
    stage_records.write_record(record, made_from)
    return target


#: The roles stage (``--base``): SFT from a trained nano on every role's rows, gently, so
#: what the base does well (the benchmark, the main agent's check of its notes) stays.
ROLES = {
    "learning_rate": 1e-3,
    "unlock": (0.0, 0.0, 0.0),
    "main_share": 0.3,
    "notes_share": 0.35,
    "verify_share": 0.2,
    "aux_weight": 0.2,
    "copy_warmup_steps": 0,
    "vision_warmup_steps": 0,
}

SHARES = ("main_share", "notes_share", "verify_share")

#: The GRPO arms' settings: a few minutes of rollouts each on one core.
GRPO = {
    "group_size": 8,
    "prompts_per_step": 1,
    "temperature": 1.0,
    "learning_rate": 1e-5,
}


def run_grpo(out: Path, sft: Path, arm: str, *, steps: int, seed: int, threads: int) -> Path:
    """One GRPO arm from the SFT checkpoint; returns its checkpoint folder."""
    from training.cpu_grpo import RunConfig
    from training.cpu_grpo import train as grpo_train
    from training.para_grpo import ParaGRPOConfig

    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s {arm} %(message)s")
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
        prompts_per_step=GRPO["prompts_per_step"],
        threads=threads,
    )
    algo = ParaGRPOConfig(
        arm=arm,
        group_size=GRPO["group_size"],
        temperature=GRPO["temperature"],
        max_new_tokens=MAX_NEW_TOKENS,
        learning_rate=GRPO["learning_rate"],
        kl_coef=0.0,
        frame_choices=REGIME.overview_frames,
        full_frames=REGIME.default_overview_frames,
        seed=seed,
    )
    grpo_train(run, algo, data.benchmark_context(summary_max_tokens=SUMMARY_MAX_TOKENS))
    write_regime(target / "checkpoint", REGIME)
    return target / "checkpoint"


def run_arms(out: Path, sft: Path, *, steps: int, seed: int, threads: int) -> dict[str, Path]:
    """Both arms from the SFT checkpoint: side by side, one thread each, when there are two
    threads or more (small matrices gain little from a second thread); else one by one."""
    kwargs = {"steps": steps, "seed": seed}
    if threads < 2:
        return {arm: run_grpo(out, sft, arm, threads=threads, **kwargs) for arm in ARMS}
    with ProcessPoolExecutor(len(ARMS), mp_context=get_context("spawn")) as pool:
        futures = {arm: pool.submit(run_grpo, out, sft, arm, threads=1, **kwargs) for arm in ARMS}
        return {arm: future.result() for arm, future in futures.items()}


def plot_dynamics(out: Path) -> Path:
    """``OUT/dynamics.png`` (f_tau, kappa and accuracy per step of both arms) and
    ``OUT/dynamics.json`` (the numbers behind it)."""
    from training.nano import dynamics

    logs = dynamics.arm_logs(out, ARMS)
    numbers = {arm: dynamics.summary(rows) for arm, rows in logs.items()}
    (out / "dynamics.json").write_text(json.dumps(numbers, indent=2) + "\n")
    return dynamics.plot(out, ARMS, out / "dynamics.png")


#: Files of a build folder that say how it was made, for its own resumes; never shipped.
BUILD_RECORDS = (TRAINED_FROM, extend.EXTENDED_FROM)


def ship(checkpoint: Path, target: Path = SHIPPED) -> Path:
    """Copy the checkpoint's files (weights, tokenizer, processor) into `target`; not the
    build's own records of what the stage was trained and extended from."""
    target.mkdir(parents=True, exist_ok=True)
    for path in checkpoint.iterdir():
        if path.is_file() and path.name not in BUILD_RECORDS:
            shutil.copy2(path, target / path.name)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = rebuild_args.parser(__doc__.splitlines()[0], SHIPPED)
    args = parser.parse_args(argv)
    if args.spaced_seconds and not args.base:
        parser.error("--spaced-seconds extends a trained nano's tokenizer: give it --base")
    if bool(args.polish_steps) != bool(args.polish_shares):
        parser.error("--polish-steps and --polish-shares MAIN NOTES VERIFY go together")
    for flag, shares in (("--shares", args.shares), ("--polish-shares", args.polish_shares)):
        if shares and (min(shares) < 0 or sum(shares) > 1):
            parser.error(f"{flag} {shares}: each share is at least 0 and they add up to at most 1")
    if args.learning_rate is not None and args.learning_rate <= 0:
        parser.error(f"--learning-rate {args.learning_rate}: a peak above 0")
    if not 0 <= args.off_topic <= 1:
        parser.error(f"--off-topic {args.off_topic}: a share, from 0 to 1")
    if not 0 <= args.second_looks <= 1:
        parser.error(f"--second-looks {args.second_looks}: a share, from 0 to 1")
    if args.sub_agent_base_spelling and not args.spaced_seconds:
        parser.error(
            "--sub-agent-base-spelling respells the spaced seconds: give it --spaced-seconds"
        )
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    for noisy in ("httpx", "langgraph"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    began, timings = time.perf_counter(), {}

    def mark(name: str) -> bool:
        timings[name] = round(time.perf_counter() - began, 1)
        log.info("%s done at %.1f s", name, timings[name])
        return args.stop_after == name

    folder = args.data or args.out / "data"
    more = []  # traces beside the data stage's own
    try:
        traces = data.build_traces(folder, args.videos)
        if args.off_topic:
            asked = functools.partial(off_topic.jobs, share=args.off_topic)
            name = f"off_topic-{args.off_topic:g}.jsonl"
            more.append(data.build_traces(folder, args.videos, name=name, make_jobs=asked))
    except data.StaleTraces as error:
        parser.exit(2, f"rebuild: {error}\n")
    first_plan = benchmark.SPLIT_SEEDS["train"] + args.videos  # seeds no video uses

    @functools.cache  # built only if a stage needs them
    def rows() -> list[dict]:
        plans = range(first_plan, first_plan + args.note_seeds)
        grounded, phrased = args.every_needle_grounded, args.phrased
        note_rows = notes.note_rows(
            plans, every_needle_grounded=grounded, phrased=phrased, off_topic=args.off_topic
        )
        made = [data.sft_rows(t, second_looks=args.second_looks) for t in [traces, *more]]
        return [row for part in made for row in part] + list(note_rows)

    rows_made_by = {k: getattr(args, k) for k in ROW_SETTINGS}

    @functools.cache
    def distinct_rows() -> list[dict]:
        return train.dedupe(rows())

    if mark("data"):
        return 0
    if args.base:
        tokens = model.VERDICTS + (model.SPACED_SECONDS if args.spaced_seconds else ())
        try:
            init = extend.extend(args.base, args.out / "init", tokens)
        except ValueError as error:
            parser.exit(2, f"rebuild: {error}\n")
    else:
        init = build_init(args.out, rows, args.seed)
    if mark("init"):
        return 0
    start = replace(
        train.SFTSchedule(),
        copy_warmup_steps=args.warmup_steps[0],
        vision_warmup_steps=args.warmup_steps[1],
    )
    schedule = replace(
        replace(start, **ROLES) if args.base else start,
        **(dict(zip(SHARES, args.shares, strict=True)) if args.shares else {}),
        steps=args.sft_steps,
        **({"learning_rate": args.learning_rate} if args.learning_rate is not None else {}),
        claim_weight=args.claim_weight,
        time_weight=args.time_weight,
        sub_agent_base_spelling=args.sub_agent_base_spelling,
        seed=args.seed,
        threads=args.threads,
        save_every=args.save_every,
        resume_every=args.resume_every,
    )
    try:
        sft = run_sft(args.out, init, distinct_rows, schedule, rows_made_by=rows_made_by)
        if mark("sft"):
            return 0
        if args.polish_steps:
            shares = dict(zip(SHARES, args.polish_shares, strict=True))
            polish = replace(schedule, steps=args.polish_steps, **shares)
            sft = run_sft(
                args.out, sft, distinct_rows, polish, name="polish", rows_made_by=rows_made_by
            )
            if mark("polish"):
                return 0
    except resume.ResumeRefused as error:
        parser.exit(2, f"rebuild: {error}\n")
    final = sft
    if args.grpo_steps:
        checkpoints = run_arms(
            args.out, sft, steps=args.grpo_steps, seed=args.seed, threads=args.threads
        )
        final = checkpoints["para_grpo"]
        plot_dynamics(args.out)
    mark("grpo")
    (args.out / "timings.json").write_text(json.dumps(timings, indent=2) + "\n")
    if args.ship:
        print(ship(final))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
