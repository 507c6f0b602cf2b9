"""PARA-GRPO: the RL algorithm, its ablation arms, and the glue from graph traces to rewards.

Plain GRPO (DeepSeekMath): G single-turn samples per prompt, one outcome reward each,
A = (r - mean) / std over the group, PPO-clipped per-token surrogate averaged per sequence
then over sequences, k3 KL to a reference in the loss (beta 0.04). PARA-GRPO, as built here
(arm ``para_grpo``), departs from it in every way listed below:

1. Think Prefix (Exploration Anchoring): every main-agent turn is prefilled with
   ``<think>\\n`` (a prompt token: mask 0, not trained); rewards score the turn *with* it.
2. Answer Suffix: the last turn's prompt demands ``<answer>`` (:func:`agents.prompts.
   forced_answer_text`, which the graph appends on the forced turn) and the format reward
   weighs the answer tags more (``rewards.TAG_WEIGHTS``).
3. Selective anchor reward inside R_fmt (lambda_anchor 0.5): +0.4 ``</think>`` closed,
   +0.3 think -> answer flow, -0.3 think never closed.
4. Composite reward R = R_acc + lambda_fmt * R_fmt + R_tool (lambda_fmt 1.0), with a tool
   reward read from the rollout's own record and a zero for degenerate output.
5. nFrames Gating: the overview frame budget is drawn uniformly from {4, 8, 16, 32, 64}
   per prompt (optionally per epoch) and shared by its G rollouts; 64 without gating.
6. Multi-turn agent episodes: all main-agent tokens of an episode share its advantage;
   tool responses, prompts and prefills are masked out; sub-agent tokens are not trained
   by default (``train_subagents`` gives them the episode's advantage, for the trainer).
7. Token-level loss averaging over the batch (DAPO) instead of the per-sequence mean.
8. KL coefficient 0.01 (k3); Adam lr 2e-6, clip 0.2, grad clip 1.0, G 8, T 0.7, 2048 tokens.
9. A reward that cannot be judged (None) is left out of its group's mean/std (advantage 0),
   never scored as 0.

The release's AReaL run also had, not reproduced here (our loss is on-policy): reward
scaling 10 and bias -0.2 before group normalisation (no effect once a group is mean/std
normalised, up to eps), a second mean/std normalisation of advantages over the batch, and
a decoupled PPO loss for rollouts up to 2 versions stale (importance weight cap 5).
The paper's other arms, token-decoupled GRPO and bidirectional tag reversion, are not
implemented: their definitions are not in the material this module was built from.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from agents.prompts import QuestionKind, forced_answer_text, implied_kind
from agents.protocol import THINK_PREFIX, with_prefix
from graphs.context import LIMITS, Context
from graphs.flags import add_dataclass_flags, given
from graphs.runs.traces import call_role
from training import rewards
from training.gating import FRAME_CHOICES, draw_frames
from training.rewards import RewardParts, RewardSettings

Arm = Literal["grpo", "anchoring", "gating", "para_grpo"]


@dataclass(frozen=True)
class ArmSpec:
    """Which PARA-GRPO components an ablation arm switches on."""

    think_prefix: bool
    answer_suffix: bool
    anchor: bool  # lambda_anchor as configured, else 0
    nframes_gating: bool


ARMS: dict[str, ArmSpec] = {
    "grpo": ArmSpec(think_prefix=False, answer_suffix=False, anchor=False, nframes_gating=False),
    "anchoring": ArmSpec(think_prefix=True, answer_suffix=True, anchor=True, nframes_gating=False),
    "gating": ArmSpec(think_prefix=False, answer_suffix=False, anchor=False, nframes_gating=True),
    "para_grpo": ArmSpec(think_prefix=True, answer_suffix=True, anchor=True, nframes_gating=True),
}
"""The paper's ablation arms (format collapses under ``grpo``; ``para_grpo`` is the method)."""


@dataclass(frozen=True)
class ParaGRPOConfig:
    """Settings of one PARA-GRPO run; each field's help is its CLI help (TRL's GRPOConfig)."""

    arm: Arm = field(
        default="para_grpo", metadata={"help": f"Ablation arm, one of {sorted(ARMS)}."}
    )
    reward_profile: rewards.Profile = field(
        default="paper",
        metadata={
            "help": "Reward rules: 'paper' (intended) or 'release' (the public code, defects too)."
        },
    )
    group_size: int = field(default=8, metadata={"help": "Rollouts per prompt (G)."})
    temperature: float = field(
        default=0.7, metadata={"help": "Sampling temperature of the main agent during rollouts."}
    )
    max_new_tokens: int = field(
        default=2048, metadata={"help": "Token cap of each main-agent turn."}
    )
    learning_rate: float = field(default=2e-6, metadata={"help": "Adam learning rate."})
    clip_eps: float = field(
        default=0.2, metadata={"help": "PPO clip range of the probability ratio."}
    )
    grad_clip: float = field(default=1.0, metadata={"help": "Gradient-norm clip."})
    kl_coef: float = field(
        default=0.01, metadata={"help": "Coefficient of the k3 KL to the reference policy."}
    )
    lambda_fmt: float = field(
        default=1.0, metadata={"help": "Weight of the format reward in the total."}
    )
    lambda_anchor: float = field(
        default=0.5, metadata={"help": "Weight of the anchor terms inside the format reward."}
    )
    correct_threshold: float = field(
        default=0.5, metadata={"help": "Accuracy that counts as correct for the tool bonus."}
    )
    scale_std: bool = field(
        default=True, metadata={"help": "Divide group-centred rewards by the group std (GRPO)."}
    )
    frame_choices: tuple[int, ...] = field(
        default=FRAME_CHOICES, metadata={"help": "Overview frame budgets to gate over."}
    )
    full_frames: int = field(default=64, metadata={"help": "Overview frames when gating is off."})
    train_subagents: bool = field(
        default=False,
        metadata={"help": "Also train sub-agent tokens with the episode's advantage."},
    )
    seed: int = field(default=0, metadata={"help": "Seed of the frame draws."})

    def __post_init__(self) -> None:
        if self.arm not in ARMS:
            raise ValueError(f"unknown arm {self.arm!r}; known: {sorted(ARMS)}")
        if self.group_size < 2:
            raise ValueError("group_size must be >= 2: one rollout has no group to compare with")

    @property
    def spec(self) -> ArmSpec:
        return ARMS[self.arm]

    @property
    def prefill(self) -> str | None:
        """The Think Prefix of every main-agent turn, or None for arms without it."""
        return THINK_PREFIX if self.spec.think_prefix else None

    def answer_suffix(self, kind: QuestionKind | None) -> str | None:
        """The Answer Suffix text (the graph's forced-answer prompt), None for arms without it.

        The graph appends that text on the forced turn whatever the arm: Context has no switch
        for it, so for ``grpo`` / ``gating`` the arm changes only the format weights.
        """
        return forced_answer_text(kind) if self.spec.answer_suffix else None

    def overview_frames(self, prompt_id: str, *, epoch: int = 0) -> int:
        """nFrames Gating: the prompt's frame budget (the same for its whole group).

        >>> ParaGRPOConfig(arm="anchoring").overview_frames("q1")
        64
        >>> ParaGRPOConfig().overview_frames("q1") in (4, 8, 16, 32, 64)
        True
        """
        if not self.spec.nframes_gating:
            return self.full_frames
        return draw_frames(prompt_id, choices=self.frame_choices, seed=self.seed, epoch=epoch)

    def rollout_context(
        self, prompt_id: str, *, epoch: int = 0, base: Context | None = None
    ) -> Context:
        """The graph Context for every rollout of ``prompt_id`` (one group)."""
        return replace(
            base or Context(),
            think_prefix=self.spec.think_prefix,
            overview_frames=self.overview_frames(prompt_id, epoch=epoch),
            temperature=self.temperature,
            max_new_tokens=self.max_new_tokens,
        )

    def reward_settings(self) -> RewardSettings:
        return RewardSettings(
            profile=self.reward_profile,
            prefill=self.prefill,
            answer_suffix=self.spec.answer_suffix,
            lambda_fmt=self.lambda_fmt,
            lambda_anchor=self.lambda_anchor if self.spec.anchor else 0.0,
            threshold=self.correct_threshold,
        )

    def reward_functions(self) -> tuple[list[Callable[..., list[float | None]]], list[float]]:
        """TRL ``reward_funcs`` and ``reward_weights``: accuracy, format, tool, bound to this
        run's settings (picklable, named). TRL adds the parts with ``nansum``, so a None part
        does not void the total there; engines that honour None should use
        :func:`training.rewards.total_rewards`. The rollout must supply ``executed_calls``
        and ``tool_responses`` columns for the paper profile's tool reward.
        """
        settings = self.reward_settings()
        funcs = [rewards.accuracy_rewards, rewards.format_rewards, rewards.tool_rewards]
        bound = [
            functools.update_wrapper(functools.partial(f, settings=settings), f) for f in funcs
        ]
        return bound, [1.0, self.lambda_fmt, 1.0]


def trace_reward(
    trace: Mapping[str, Any], *, target: Any, settings: RewardSettings = rewards.PAPER
) -> RewardParts:
    """The reward of one graph trace (``graphs.runs.traces.Trace``); None parts for a failed run.

    Turns are the main agent's completions with the prefill each call recorded; executed
    calls are those the graph validated and ran; responses are the notes that came back.
    """
    main = [call for call in trace.get("model_calls", []) if call_role(call) == "main"]
    if trace.get("status") == "failed" or not main:
        return RewardParts(None, 0.0, None, None)
    turns = [
        with_prefix(call["completion"]["text"], call["prefill"])
        if call["prefill"]
        else call["completion"]["text"]
        for call in main
    ]
    options = list(trace.get("options") or [])
    kind = implied_kind(options, trace.get("kind"))
    return rewards.total_reward(
        turns,
        kind=kind,
        target=target,
        executed_calls=sum(call["error"] is None for call in trace.get("tool_calls", [])),
        tool_responses=len(trace.get("notes", [])),
        letters="ABCDEFGHIJ"[: len(options)] if options else "ABCD",
        settings=replace(settings, prefill=main[0]["prefill"]),
        stopped=[call["completion"].get("finish_reason") != "length" for call in main],
    )


SET_BY_ENGINE = frozenset(
    {"think_prefix", "overview_frames", "temperature", "max_new_tokens", "seed", "top_p"}
)
"""Context fields the arm and the training engine decide, not the command line (top_p stays
1: the loss is over the untruncated distribution)."""


def parse_run_args(argv: list[str] | None, run_cls: type, run_title: str, description: str):
    """(run, ParaGRPOConfig, Context) from one command line: ``run_cls``'s flags, the
    algorithm's and the graph's (less ``SET_BY_ENGINE``), for both training entry points."""
    parser = argparse.ArgumentParser(description=description)
    add_dataclass_flags(parser, run_cls, run_title)
    add_dataclass_flags(parser, ParaGRPOConfig, "algorithm (PARA-GRPO)")
    add_dataclass_flags(
        parser,
        Context,
        "graph (Context; frames, prefix, sampling come from the arm)",
        skip=SET_BY_ENGINE,
        limits=LIMITS,
    )
    args = parser.parse_args(argv)
    try:
        return (
            run_cls(**given(run_cls, args)),
            ParaGRPOConfig(**given(ParaGRPOConfig, args)),
            Context(**given(Context, args, skip=SET_BY_ENGINE)),
        )
    except ValueError as exc:
        parser.error(str(exc))
