"""Rollouts: G runs of the real graph per prompt on the policy, and their trainable turns.

A :class:`Trajectory` is one episode of the main agent. Each of its :class:`Turn` s is one
model call kept as sampled: the prompt ids the policy saw, the ids it generated and their
log-probs (``training.recording``). Turns are trained one sequence each, never as one
concatenated conversation: the graph re-renders earlier turns from their text, and text
re-tokenised need not give back the generated ids, so only the per-call ids are what the
policy actually saw and produced.

Loss mask (``Turn.loss_mask`` over ``Turn.input_ids``): 1 on every generated token (the end
token included), 0 on the whole prompt. The prompt holds the system text, frames, question,
earlier turns, the tool responses (they reach the model inside the *next* turn's prompt, so
they are never trained) and the Think Prefix ``<think>\\n``: that prefix is written by the
harness, not sampled, has no sampling log-prob, and is not trained. Sub-agent calls are
recorded as turns too and trained with the episode's advantage only when asked; the
verify gate's judgements (``verify:`` calls) are left out of training.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import fmean

import torch

from agents.benchmark import prompt_text
from agents.requests import Role
from agents.synthetic import make_questions, make_video, read_manifest, write_manifest
from graphs.context import Context, RunContext
from graphs.runs.run import run_question, shared_graph
from graphs.runs.traces import Trace, call_role
from graphs.store.sqlite_board import Board
from training.questions import RLPrompt
from training.recording import RecordingChatModel
from training.rewards import RewardParts

_TARGETS = {
    "multiple_choice": lambda t: t["letter"],
    "grounding": lambda t: (t["start"], t["end"]),
    "open_ended": lambda t: t["text"],
}


def needle_prompts(
    data_dir: str | Path, *, n_videos: int = 0, seed: int = 0, duration: float = 60.0
) -> list[RLPrompt]:
    """Every question of the needle manifests (``*.json``) in ``data_dir``, after generating
    ``n_videos`` videos there (seeds ``seed``...; an existing manifest is reused)."""
    folder = Path(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n_videos):
        manifest = folder / f"needle_{seed + i:07d}.json"
        if not manifest.exists():
            video = make_video(manifest.with_suffix(".mp4"), seed=seed + i, duration=duration)
            write_manifest(video, make_questions(video, seed=seed + i), manifest)
    prompts = []
    for manifest in sorted(folder.glob("*.json")):
        video, items = read_manifest(manifest)
        prompts += [
            RLPrompt(
                item.id,
                video.path,
                item.question,
                item.options,
                item.kind,
                _TARGETS[item.kind](item.target),
                prompt_text(item),
            )
            for item in items
        ]
    if not prompts:
        raise FileNotFoundError(f"no needle manifests (*.json) in {folder}")
    return prompts


def batch_prompts(prompts: Sequence[RLPrompt], step: int, size: int, *, seed: int = 0):
    """The ``size`` prompts of ``step`` and their epoch: one shuffled pass after another."""
    out = []
    for i in range(step * size, (step + 1) * size):
        epoch, position = divmod(i, len(prompts))
        order = list(range(len(prompts)))
        random.Random(f"{seed}:{epoch}").shuffle(order)
        out.append((prompts[order[position]], epoch))
    return out


@dataclass(frozen=True)
class Turn:
    """One model call as sampled; ``input_ids`` = prompt + completion, ``loss_mask`` over it."""

    agent: str  # the trace's name for the caller: "main" or "sub:<turn>:<index>"
    role: Role
    turn: int
    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    old_logprobs: tuple[float, ...]  # one per completion id, from sampling
    vision: Mapping[str, torch.Tensor]
    temperature: float

    @property
    def input_ids(self) -> list[int]:
        return [*self.prompt_ids, *self.completion_ids]

    @property
    def loss_mask(self) -> list[int]:
        return [0] * len(self.prompt_ids) + [1] * len(self.completion_ids)


@dataclass
class Trajectory:
    """One episode: the main agent's turns, sub-agent turns, the trace, and its scores."""

    prompt: RLPrompt
    index: int  # position in its group
    context: Context
    trace: Trace
    turns: list[Turn]
    sub_turns: list[Turn]
    parts: RewardParts | None = None
    reward: float | None = None  # what the advantage is computed from (the objective)
    advantage: float = 0.0

    def trained_turns(self, *, subagents: bool = False) -> list[Turn]:
        return self.turns + self.sub_turns if subagents else list(self.turns)

    @property
    def executed_calls(self) -> int:
        return sum(call["error"] is None for call in self.trace["tool_calls"])

    @property
    def response_tokens(self) -> int:
        return sum(len(turn.completion_ids) for turn in self.turns)


# --- objectives: the scalar a trajectory's advantage is computed from --------------------


def even_token_share(t: Trajectory) -> float | None:
    """Share of the main agent's generated tokens with an even id (a smoke-test objective:
    an untrained model's noise already varies in it within a group)."""
    ids = [i for turn in t.turns for i in turn.completion_ids]
    return sum(i % 2 == 0 for i in ids) / len(ids) if ids else None


def brevity(t: Trajectory) -> float | None:
    """1 - generated tokens / the token budget of the turns taken."""
    budget = len(t.turns) * t.context.max_new_tokens
    return 1.0 - t.response_tokens / budget if budget else None


def paravt_reward(t: Trajectory) -> float | None:
    """PARA-GRPO's R = R_acc + lambda_fmt R_fmt + R_tool (``t.parts``, set by the engine)."""
    return t.parts.total if t.parts else None


OBJECTIVES = {
    "paravt": paravt_reward,
    "even_tokens": even_token_share,
    "brevity": brevity,
}
"""What the advantage is computed from; ``paravt`` is PARA-GRPO's R (parts always logged)."""


def rollout_seed(seed: int, prompt_id: str, index: int) -> int:
    key = f"{seed}:{prompt_id}:{index}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=7).digest(), "big")


def build_trajectory(
    prompt: RLPrompt, index: int, context: Context, trace: Trace, recorder: RecordingChatModel
) -> Trajectory:
    """Pair each model call of ``trace`` with its record (ids, log-probs, images)."""
    turns: list[Turn] = []
    for call in trace["model_calls"]:
        done = call["completion"]
        record = recorder.find(done["prompt_token_ids"], done["token_ids"])
        turns.append(
            Turn(
                call["agent"],
                call_role(call),
                call["turn"],
                record.prompt_ids,
                record.token_ids,
                record.logprobs,
                record.vision,
                record.temperature,
            )
        )
    main = sorted((t for t in turns if t.role == "main"), key=lambda t: t.turn)
    # verify-gate verdicts are not trained; sub-agent turns only when asked (train_subagents)
    subs = [t for t in turns if t.role == "sub_agent"]
    return Trajectory(prompt, index, context, trace, main, subs)


async def rollout_group(
    recorder: RecordingChatModel,
    board: Board,
    prompt: RLPrompt,
    context: Context,
    *,
    group_size: int,
    seed: int,
    limit: asyncio.Semaphore | None = None,
) -> list[Trajectory]:
    """``group_size`` runs of the graph on ``prompt``, all under the same ``context`` (so
    nFrames Gating's draw is shared by the group). Each run samples with its own seed;
    ``context.seed`` is cleared, since one seed would make the G rollouts identical."""
    context = replace(context, seed=None)
    limit = limit or asyncio.Semaphore(group_size)

    graph = shared_graph(board)

    async def one(index: int) -> Trajectory:
        async with limit:
            fork = recorder.fork(seed=rollout_seed(seed, prompt.id, index))
            result = await run_question(
                graph,
                board,
                video_path=prompt.video,
                question=prompt.ask,
                context=RunContext.of(context, fork),  # this rollout samples from its recorder
            )
        return build_trajectory(prompt, index, context, result.trace, fork)

    return list(await asyncio.gather(*(one(i) for i in range(group_size))))


def rollout_metrics(trajectories: Sequence[Trajectory]) -> dict[str, float | None]:
    """Per-step rollout statistics: reward parts, f_tau, kappa, calls, lengths. A failed run
    (an infrastructure error) is only counted in ``failed``, never as a zero elsewhere."""
    done = [t for t in trajectories if t.trace["status"] != "failed"]

    def mean(values) -> float | None:
        values = [v for v in values if v is not None]
        return round(fmean(values), 6) if values else None

    parts = [t.parts for t in done if t.parts is not None]
    return {
        "reward": mean(t.reward for t in done),
        "reward_total": mean(p.total for p in parts),
        "accuracy": mean(p.accuracy for p in parts),
        "format": mean(p.format for p in parts),
        "tool": mean(p.tool for p in parts),
        "f_tau": mean(p.format for p in parts),
        "kappa": mean(float(t.executed_calls >= 1) for t in done),
        "calls_per_rollout": mean(t.executed_calls for t in done),
        "calls_emitted": mean(len(t.trace["tool_calls"]) for t in done),
        "turns_per_rollout": mean(len(t.turns) for t in done),
        "response_length": mean(t.response_tokens for t in done),
        "overview_frames": mean(t.context.overview_frames for t in trajectories),
        "answered": mean(float(t.trace["status"] == "answered") for t in trajectories),
        "failed": mean(float(t.trace["status"] == "failed") for t in trajectories),
    }
