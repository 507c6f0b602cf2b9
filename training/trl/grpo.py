"""PARA-GRPO (and its ablation arms) on one node through TRL's ``GRPOTrainer``, with a
``rollout_func`` that runs the graph.

    python -m training.trl.grpo --arm para_grpo --model DIR --output-dir runs/grpo
    accelerate launch --config_file training/configs/accelerate_ddp.yaml \\
        -m training.trl.grpo --arm para_grpo --model DIR --output-dir runs/grpo --bf16 ...

One TRL step: the dataloader hands ``prompts_per_step`` prompt ids, each repeated G times;
every entry becomes one graph episode whose model calls all go to TRL's generation backend
(transformers ``generate`` on the policy, or vLLM in server / colocate mode), recorded id for
id (``training.trl.rollout``: how an episode becomes TRL samples, masks, images); the
objective (``paravt``: ``para_grpo.trace_reward``'s R; parts, f_tau, kappa, calls and chain
statistics logged as ``paravt/*``) is TRL's only reward; TRL normalises it per group and
takes its loss step. Logs: TRL's own, and one JSON line per step in ``OUT/grpo.jsonl``
(``training.plot`` reads it); the final policy is ``OUT/model``, a folder the local server
and SGLang load.

How PARA-GRPO departs from plain GRPO is ``training.para_grpo``'s docstring; through TRL:
the k3 KL is ``beta``, the clip ``epsilon``, token-level averaging is ``loss_type="dapo"``,
group normalisation ``scale_rewards="group"`` (TRL divides by the sample std + 1e-4;
``training.advantages`` by the population std), a None reward gets advantage 0. TRL scores
every sequence at ``temperature``; sub-agents, when trained, sample at it too. The sampling
log-probs feed TRL's vLLM importance correction; on the transformers path TRL recomputes
them (on-policy, ``num_iterations`` 1).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from graphs.context import Context
from training.para_grpo import ParaGRPOConfig, parse_run_args
from training.questions import RLPrompt
from training.rollout import OBJECTIVES, needle_prompts
from training.trainer_args import checkpointing_field

log = logging.getLogger(__name__)

Generation = Literal["transformers", "vllm-server", "vllm-colocate"]


@dataclass(frozen=True)
class TRLRunConfig:
    """Engine settings of one TRL run (the algorithm's are ``ParaGRPOConfig``)."""

    model: str = field(metadata={"help": "Initial policy: a Qwen3-VL Hugging Face folder."})
    output_dir: str = field(metadata={"help": "Run folder: grpo.jsonl, model/, TRL checkpoints."})
    data: str | None = field(
        default=None, metadata={"help": "Folder of needle manifests (*.json); default OUT/data."}
    )
    n_videos: int = field(
        default=4, metadata={"help": "Needle videos generated into the data folder if missing."}
    )
    video_seconds: float = field(default=60.0, metadata={"help": "Length of generated videos."})
    rows: str | None = field(
        default=None,
        metadata={
            "help": "JSONL of questions (id, video, question, target; options, kind) "
            "to train on instead of needle manifests."
        },
    )
    video_root: str | None = field(
        default=None, metadata={"help": "Folder relative video paths of --rows are under."}
    )
    steps: int = field(default=50, metadata={"help": "Optimiser steps (TRL's max_steps)."})
    prompts_per_step: int = field(
        default=2, metadata={"help": "Prompts (groups of G episodes) per step, all ranks."}
    )
    gradient_accumulation_steps: int = field(
        default=1, metadata={"help": "Micro-batches per step (the step's episodes split)."}
    )
    objective: str = field(
        default="paravt",
        metadata={"help": "What advantages come from.", "choices": sorted(OBJECTIVES)},
    )
    num_iterations: int = field(
        default=1, metadata={"help": "Optimiser passes per batch (GRPO's mu; >1 lets clip bite)."}
    )
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay."})
    generation: Generation = field(
        default="transformers",
        metadata={"help": "TRL's generation backend for every model call of the graph."},
    )
    vllm_server_base_url: str | None = field(
        default=None, metadata={"help": "vllm-server: the `trl vllm-serve` URL."}
    )
    vllm_gpu_memory_utilization: float = field(
        default=0.3, metadata={"help": "vllm-colocate: share of each GPU vLLM may take."}
    )
    rollout_concurrency: int = field(default=16, metadata={"help": "Graph episodes in flight."})
    max_batch: int = field(default=64, metadata={"help": "Most model calls per generate batch."})
    bf16: bool | None = field(
        default=None, metadata={"help": "bf16 autocast (default: on where CUDA supports it)."}
    )
    gradient_checkpointing: bool = field(
        default=False,
        metadata={
            "help": "Recompute activations in backward (not with FSDP's own "
            "activation checkpointing: TRL refuses both)."
        },
    )
    threads: int | None = field(default=None, metadata={"help": "torch CPU threads."})
    save_every: int = field(default=0, metadata={"help": "TRL checkpoint every N steps (0: none)."})
    report_to: str = field(default="none", metadata={"help": "TRL's report_to (wandb, ...)."})
    regate_each_epoch: bool = field(
        default=False, metadata={"help": "New frame-count draw per epoch (paper: one draw)."}
    )

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {self.objective!r}; known: {sorted(OBJECTIVES)}")
        if self.generation == "vllm-server" and not self.vllm_server_base_url:
            raise ValueError("--generation vllm-server needs --vllm-server-base-url")


def check_launch(run: TRLRunConfig, env: Mapping[str, str] = os.environ) -> None:
    """Refuse, before any weight is loaded, what the ``accelerate launch`` config in ``env``
    cannot run: FSDP's own activation checkpointing with ``--gradient-checkpointing``
    (transformers' Trainer raises ValueError for the pair), and FSDP on several processes
    with transformers generation (sharded forwards are collectives; episodes make different
    numbers of calls per rank, so it would hang)."""
    fsdp = env.get("ACCELERATE_USE_FSDP", "false").lower() == "true"
    own = env.get("FSDP_ACTIVATION_CHECKPOINTING", "false").lower() == "true"
    if fsdp and own and run.gradient_checkpointing:
        raise ValueError(
            "the FSDP config checkpoints activations itself (fsdp_activation_checkpointing): "
            "drop --gradient-checkpointing"
        )
    if fsdp and run.generation == "transformers" and int(env.get("WORLD_SIZE", "1")) > 1:
        raise ValueError(
            "FSDP shards the policy: generate with --generation vllm-colocate or vllm-server"
        )


def grpo_config(run: TRLRunConfig, algo: ParaGRPOConfig, *, world_size: int | None = None):
    """TRL's ``GRPOConfig`` for this run (every PARA-GRPO knob mapped; module docstring)."""
    import torch
    from trl import GRPOConfig

    check_launch(run)
    world = world_size or int(os.environ.get("WORLD_SIZE", "1"))
    episodes = run.prompts_per_step * algo.group_size
    per_step = world * run.gradient_accumulation_steps
    if episodes % per_step:
        raise ValueError(
            f"prompts_per_step x group_size ({episodes}) must split evenly over "
            f"{world} processes x {run.gradient_accumulation_steps} accumulation steps"
        )
    if algo.temperature <= 0:
        raise ValueError("GRPO samples: temperature must be above 0")
    bf16 = run.bf16
    if bf16 is None:
        bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    vllm = run.generation != "transformers"
    return GRPOConfig(
        output_dir=run.output_dir,
        max_steps=run.steps,
        seed=algo.seed,
        per_device_train_batch_size=episodes // per_step,
        gradient_accumulation_steps=run.gradient_accumulation_steps,
        num_generations=algo.group_size,
        num_iterations=run.num_iterations,
        learning_rate=algo.learning_rate,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=run.weight_decay,
        max_grad_norm=algo.grad_clip,
        beta=algo.kl_coef,
        epsilon=algo.clip_eps,
        loss_type="dapo",
        scale_rewards="group" if algo.scale_std else "none",
        temperature=algo.temperature,
        top_p=1.0,
        top_k=0,
        max_completion_length=algo.max_new_tokens,
        bf16=bf16,
        disable_dropout=True,
        **{checkpointing_field(GRPOConfig): run.gradient_checkpointing},
        use_vllm=vllm,
        vllm_mode="server" if run.generation == "vllm-server" else "colocate",
        vllm_server_base_url=run.vllm_server_base_url,
        vllm_gpu_memory_utilization=run.vllm_gpu_memory_utilization,
        logging_steps=1,
        report_to=run.report_to,
        log_completions=False,
        save_strategy="steps" if run.save_every else "no",
        save_steps=run.save_every or 500,
        dataloader_num_workers=0,
    )


def load_prompts(run: TRLRunConfig) -> list[RLPrompt]:
    if run.rows:
        lines = Path(run.rows).read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        return [RLPrompt.from_data(row, run.video_root) for row in rows]
    data = Path(run.data) if run.data else Path(run.output_dir) / "data"
    return needle_prompts(data, n_videos=run.n_videos, duration=run.video_seconds)


def _log_callback(path: Path, arm: str):
    from transformers import TrainerCallback

    class StepLog(TrainerCallback):
        """One JSON line per logged step: TRL's numbers, ``paravt/*`` without the prefix."""

        def on_log(self, args, state, control, logs=None, **kwargs):
            if not state.is_world_process_zero or not logs or "loss" not in logs:
                return
            line = {"step": state.global_step, "arm": arm}
            for key, value in logs.items():
                name = key.removeprefix("paravt/")
                line[name if name not in line else key] = value
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(line) + "\n")

    return StepLog()


def build_trainer(
    run: TRLRunConfig,
    algo: ParaGRPOConfig,
    context: Context | None = None,
    *,
    trainer_class: type | None = None,
):
    """The trainer of this run (``trainer_class``: a ``ParaVTGRPOTrainer`` subclass) and the
    board its episodes write to (the caller closes it)."""
    import torch
    from datasets import Dataset
    from transformers import AutoConfig, AutoImageProcessor, AutoTokenizer

    from graphs.store.sqlite_board import Board
    from serving.engine import ChatRenderer
    from training.trl.rollout import ParaVTRollout, paravt_objective
    from training.trl.trainer import ParaVTGRPOTrainer

    if run.threads:
        torch.set_num_threads(run.threads)
    out = Path(run.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    args = grpo_config(run, algo)
    prompts = load_prompts(run)
    tokenizer = AutoTokenizer.from_pretrained(run.model)
    renderer = ChatRenderer(
        tokenizer,
        AutoImageProcessor.from_pretrained(run.model),
        AutoConfig.from_pretrained(run.model).image_token_id,
    )
    board = Board(out / f"board-{args.process_index}.sqlite")
    rollout = ParaVTRollout(
        prompts,
        algo,
        board,
        context=context,
        objective=run.objective,
        concurrency=run.rollout_concurrency,
        regate_each_epoch=run.regate_each_epoch,
    )
    try:
        trainer = (trainer_class or ParaVTGRPOTrainer)(
            model=run.model,
            reward_funcs=[paravt_objective],
            args=args,
            train_dataset=Dataset.from_dict({"prompt": [p.id for p in prompts]}),
            processing_class=tokenizer,
            rollout=rollout,
            renderer=renderer,
            max_batch=run.max_batch,
            callbacks=[_log_callback(out / "grpo.jsonl", algo.arm)],
        )
    except BaseException:
        board.close()
        raise
    return trainer, board


def train(run: TRLRunConfig, algo: ParaGRPOConfig, context: Context | None = None) -> Path:
    """Train ``run.steps`` TRL steps; save ``OUT/model``; return the step log's path."""
    out = Path(run.output_dir)
    trainer, board = build_trainer(run, algo, context)
    try:
        trainer.train()
        trainer.save_model(str(out / "model"))
    finally:
        board.close()
    if trainer.args.process_index == 0:
        for src in Path(run.model).iterdir():  # the image processor, chat template, regime
            weights = src.name.startswith(("model", "pytorch_model"))
            if src.is_file() and not weights and not (out / "model" / src.name).exists():
                shutil.copy2(src, out / "model" / src.name)
    return out / "grpo.jsonl"


def parse_args(argv: list[str] | None = None) -> tuple[TRLRunConfig, ParaGRPOConfig, Context]:
    return parse_run_args(argv, TRLRunConfig, "run (TRL)", __doc__.splitlines()[0])


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    run, algo, context = parse_args(argv)
    print(train(run, algo, context))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
