"""A single-machine GRPO engine on the CPU: rollouts through the real graph, then a policy step.

PARA-GRPO's trainer is TRL's (``training.trl.grpo``). This loop stays for one thing TRL
cannot give: byte-reproducible runs. Every model call here samples from its own seed
(``rollout.rollout_seed`` of the prompt and call), so the shipped paravt-nano rebuild
(``training.nano``) gives the same weights twice; TRL's generation batches the calls of
concurrent episodes and draws them from one random stream, so a call's tokens depend on
which calls shared its batch. Both implement the same algorithm (``training.para_grpo``).

One step, as a plain loop (:meth:`GRPOEngine.step`):

1. sample ``prompts_per_step`` prompts; one graph Context per prompt (nFrames Gating draws
   its frame count once, shared by the group; the arm sets the Think Prefix);
2. run the graph ``group_size`` times per prompt with the in-process recording policy;
3. reward each episode (``para_grpo.trace_reward``: R_acc + lambda_fmt R_fmt + R_tool, parts
   logged) and map it to the scalar being optimised (:data:`OBJECTIVES`; ``paravt`` is R);
4. group advantages (``advantages.group_advantages``; None -> left out, advantage 0);
5. recompute each trained turn's log-probs under the current policy (and the frozen
   reference when ``kl_coef`` > 0), ``loss.policy_loss`` averaged over all trained tokens of
   the batch, backward turn by turn, gradient clip, AdamW; ``num_iterations`` times;
6. append one JSON line to ``OUT/grpo.jsonl``.

How this departs from plain GRPO is listed in ``training.para_grpo``. On top of that: the
old log-probs are the sampling ones recorded at generation (no separate old-policy pass);
turns with advantage 0 are skipped when there is no KL term (they add exactly nothing);
the model stays in eval mode (Qwen3-VL has no dropout), so sampling and recomputation are
the same function. ``OUT/checkpoint`` is a Hugging Face folder the local server loads.

    python -m training.cpu_grpo --arm para_grpo --model DIR --out runs/grpo --steps 50
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from graphs.context import Context
from graphs.store.sqlite_board import Board
from serving.engine import LocalVLM
from training.advantages import group_advantages, rewards_tensor
from training.loss import policy_loss
from training.para_grpo import ParaGRPOConfig, parse_run_args, trace_reward
from training.recording import RecordingChatModel, token_logprobs
from training.rollout import (
    OBJECTIVES,
    Trajectory,
    batch_prompts,
    needle_prompts,
    rollout_group,
    rollout_metrics,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunConfig:
    """Engine settings of one run (the algorithm's are ``ParaGRPOConfig``)."""

    model: str = field(metadata={"help": "Initial policy: a Qwen3-VL Hugging Face folder."})
    out: str = field(metadata={"help": "Run folder: grpo.jsonl, checkpoint/, board.sqlite."})
    data: str | None = field(
        default=None, metadata={"help": "Folder of needle manifests (*.json); default OUT/data."}
    )
    n_videos: int = field(
        default=4, metadata={"help": "Needle videos generated into the data folder if missing."}
    )
    video_seconds: float = field(default=60.0, metadata={"help": "Length of generated videos."})
    steps: int = field(default=50, metadata={"help": "GRPO steps (optimiser updates per batch)."})
    prompts_per_step: int = field(default=2, metadata={"help": "Prompts (groups) per step."})
    objective: str = field(
        default="paravt",
        metadata={"help": "What advantages come from.", "choices": sorted(OBJECTIVES)},
    )
    num_iterations: int = field(
        default=1, metadata={"help": "Optimiser steps per batch (GRPO's mu; >1 lets clip bite)."}
    )
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay."})
    rollout_concurrency: int = field(default=4, metadata={"help": "Graph runs in flight."})
    threads: int = field(default=1, metadata={"help": "torch CPU threads."})
    save_every: int = field(default=0, metadata={"help": "Save the checkpoint every N steps."})
    regate_each_epoch: bool = field(
        default=False, metadata={"help": "New frame-count draw per epoch (paper: one draw)."}
    )

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {self.objective!r}; known: {sorted(OBJECTIVES)}")


class GRPOEngine:
    """The policy (a ``LocalVLM``'s model), its frozen reference, the optimiser and the log."""

    def __init__(self, run: RunConfig, algo: ParaGRPOConfig, context: Context | None = None):
        self.run, self.algo, self.context = run, algo, context or Context()
        if self.context.top_p != 1.0:
            raise ValueError("GRPO samples with top_p 1: the loss recomputes untruncated logprobs")
        torch.manual_seed(algo.seed)
        self.out = Path(run.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.vlm = LocalVLM(run.model, threads=run.threads, default_max_tokens=algo.max_new_tokens)
        self.policy = self.vlm.model
        self.ref = copy.deepcopy(self.policy).requires_grad_(False) if algo.kl_coef > 0 else None
        self.optimizer = torch.optim.AdamW(
            self.policy.parameters(), lr=algo.learning_rate, weight_decay=run.weight_decay
        )
        self.recorder = RecordingChatModel(self.vlm)
        self.board = Board(self.out / "board.sqlite")
        data = Path(run.data) if run.data else self.out / "data"
        self.prompts = needle_prompts(data, n_videos=run.n_videos, duration=run.video_seconds)
        self.log_path = self.out / "grpo.jsonl"

    async def step(self, step: int) -> dict[str, Any]:
        """One GRPO step; returns (and appends to the log) its JSON line."""
        algo, began = self.algo, time.perf_counter()
        batch = batch_prompts(self.prompts, step, self.run.prompts_per_step, seed=algo.seed)
        limit = asyncio.Semaphore(self.run.rollout_concurrency)
        groups = [
            rollout_group(
                self.recorder,
                self.board,
                prompt,
                algo.rollout_context(
                    prompt.id, epoch=epoch if self.run.regate_each_epoch else 0, base=self.context
                ),
                group_size=algo.group_size,
                seed=algo.seed * 1_000_003 + step,
                limit=limit,
            )
            for prompt, epoch in batch
        ]
        trajs = [t for group in await asyncio.gather(*groups) for t in group]
        rolled = time.perf_counter()

        settings, objective = algo.reward_settings(), OBJECTIVES[self.run.objective]
        for t in trajs:
            t.parts = trace_reward(t.trace, target=t.prompt.target, settings=settings)
            t.reward = objective(t)
        rewards = rewards_tensor([t.reward for t in trajs], algo.group_size)
        advantages = group_advantages(rewards, scale_std=algo.scale_std).flatten().tolist()
        for t, a in zip(trajs, advantages, strict=True):
            t.advantage = a
        scored = time.perf_counter()

        update = self.update(trajs)
        done = time.perf_counter()
        line = {
            "step": step,
            "arm": algo.arm,
            "objective": self.run.objective,
            **rollout_metrics(trajs),
            **update,
            "rollouts": len(trajs),
            "lr": self.optimizer.param_groups[0]["lr"],
            "time_rollout_s": round(rolled - began, 4),
            "time_reward_s": round(scored - rolled, 4),
            "time_update_s": round(done - scored, 4),
            "step_time_s": round(done - began, 4),
        }
        with open(self.log_path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
        return line

    def update(self, trajs: list[Trajectory]) -> dict[str, float]:
        """Step 5 of the module docstring, for a batch whose advantages are set."""
        algo = self.algo
        work = [
            (turn, t.advantage)
            for t in trajs
            for turn in t.trained_turns(subagents=algo.train_subagents)
            if turn.completion_ids
        ]
        n_tokens = sum(len(turn.completion_ids) for turn, _ in work)
        if self.ref is None:
            work = [(turn, adv) for turn, adv in work if adv != 0.0]
        ref_cache: dict[int, torch.Tensor] = {}
        keys = ("loss", "clip", "kl", "ratio", "tokens", "gap", "gap_tokens", "grad_norm")
        sums = dict.fromkeys(keys, 0.0)
        for iteration in range(self.run.num_iterations):
            self.optimizer.zero_grad(set_to_none=True)
            for k, (turn, adv) in enumerate(work):
                logp = token_logprobs(
                    self.vlm,
                    self.policy,
                    turn.prompt_ids,
                    turn.completion_ids,
                    turn.vision,
                    temperature=turn.temperature,
                )[None]
                old = torch.tensor([turn.old_logprobs])
                if self.ref is not None and k not in ref_cache:
                    with torch.no_grad():
                        ref_cache[k] = token_logprobs(
                            self.vlm,
                            self.ref,
                            turn.prompt_ids,
                            turn.completion_ids,
                            turn.vision,
                            temperature=turn.temperature,
                        )[None]
                loss, stats = policy_loss(
                    logp,
                    old,
                    torch.tensor([adv]),
                    torch.ones_like(old),
                    clip_eps=algo.clip_eps,
                    ref_logp=ref_cache.get(k),
                    kl_coef=algo.kl_coef,
                    num_tokens=n_tokens,
                )
                loss.backward()
                sums["loss"] += loss.item()
                sums["clip"] += stats.clip_fraction * stats.tokens
                sums["kl"] += stats.kl_mean * stats.tokens
                sums["ratio"] += stats.ratio_mean * stats.tokens
                sums["tokens"] += stats.tokens
                if iteration == 0:  # recomputed vs sampled, before any update: ~0
                    sums["gap"] += float((logp.detach() - old).abs().sum())
                    sums["gap_tokens"] += stats.tokens
            if work:
                norm = torch.nn.utils.clip_grad_norm_(self.policy.parameters(), algo.grad_clip)
                sums["grad_norm"] += float(norm)
                self.optimizer.step()
        iters, seen = self.run.num_iterations, max(sums["tokens"], 1.0)
        return {
            "loss": round(sums["loss"] / iters, 6),
            "clip_fraction": round(sums["clip"] / seen, 6),
            "kl": round(sums["kl"] / seen, 6),
            "ratio_mean": round(sums["ratio"] / seen, 6) if work else 1.0,
            "logprob_gap": round(sums["gap"] / max(sums["gap_tokens"], 1.0), 6),
            "grad_norm": round(sums["grad_norm"] / iters, 6),
            "trained_tokens": n_tokens,
        }

    def save(self, target: Path | None = None) -> Path:
        """Write the policy as a Hugging Face folder (processor files copied from the input)."""
        target = target or self.out / "checkpoint"
        staging = target.with_name(f".{target.name}.tmp")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for src in Path(self.run.model).iterdir():
            if src.is_file() and not src.name.startswith(("model", "pytorch_model")):
                shutil.copy2(src, staging / src.name)
        self.policy.save_pretrained(staging)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
        return target

    def close(self) -> None:
        self.board.close()


def train(run: RunConfig, algo: ParaGRPOConfig, context: Context | None = None) -> Path:
    """Run ``run.steps`` GRPO steps, save the checkpoint, and return the log's path."""
    engine = GRPOEngine(run, algo, context)
    try:
        for step in range(run.steps):
            line = asyncio.run(engine.step(step))
            log.info(
                "step %d reward %s f_tau %s kappa %s (%.1fs)",
                step,
                line["reward"],
                line["f_tau"],
                line["kappa"],
                line["step_time_s"],
            )
            if run.save_every and (step + 1) % run.save_every == 0:
                engine.save()
        engine.save()
    finally:
        engine.close()
    return engine.log_path


def parse_args(argv: list[str] | None = None) -> tuple[RunConfig, ParaGRPOConfig, Context]:
    return parse_run_args(argv, RunConfig, "run", __doc__.splitlines()[0])


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    run, algo, context = parse_args(argv)
    path = train(run, algo, context)
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
