"""PARA-GRPO on AReaL: the graph as an AReaL agent workflow (proxy mode).

AReaL wraps any object with ``async def run(data, **extra_kwargs)`` in its
``OpenAIProxyWorkflow`` (subclassing ``AgentWorkflow`` is deprecated since 1.0). In inline mode
it passes ``base_url`` (its proxy), ``api_key`` (one session key per rollout) and
``http_client``; in subproc mode ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``. The proxy records
every chat completion with its token ids and logprobs. ``run`` returns a float: AReaL sets it
on the session's last completion and propagates it back with ``rollout.agent.turn_discount``
(1.0 here, so every recorded main-agent turn gets the episode's reward). ``ParaVTAgent`` is
that object; :func:`rollout_outcome` is its pure part (trace -> reward, recorded turns, stats).

How the graph meets the proxy, and why:

- Think Prefix by chat template. The proxy renders each request with
  ``add_generation_prompt=True`` and drops ``continue_final_message``, so a prefilled
  assistant message would be closed and a new turn opened after it. The arm's ``<think>\\n``
  must come from the rollout tokenizer's chat template (``rollout.tokenizer_path``); the agent
  does not send it, the graph still records it as the turn's prefill, and the reward scores
  the turn with it. ``training.areal.launch`` checks the template before training starts.
- Sub-agent requests carry ``store: false``: the proxy does not record them, so they are not
  trained (``train_subagents`` records them; they then get the episode's reward).
- No client retries: a retried request would leave an orphan completion in the session.
- A failed run, or one that cannot be judged, raises :class:`UnjudgedRollout`, never a 0:
  AReaL rejects the task (its whole group; inline mode has no per-rollout "cannot judge").

Departures from ``training.para_grpo`` on one machine: every main-agent turn is its own
training sample (export style ``individual``), so AReaL's group statistics (per prompt since
AReaL 2.0) weigh a rollout by its number of turns; the KL is AReaL's per-token reward penalty
(``kl_ctl``), not a loss term. Training a VLM through the proxy needs an AReaL whose proxy
exports image tensors (areal-project/AReaL#1606, after 2.0.0; 1.0.4 sends only placeholder
tokens to the trainer); the launcher refuses one that does not. See docs/areal.md.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from agents.client.completion import ChatModel, Completion
from agents.client.llm import OpenAIChatModel
from agents.requests import ModelRequest
from graphs.context import Context, RunContext
from graphs.runs.run import run_question, shared_graph
from graphs.runs.traces import call_role
from graphs.store.sqlite_board import Board
from training.para_grpo import ParaGRPOConfig, trace_reward
from training.questions import RLPrompt
from training.rewards import RewardParts

WORKFLOW = "training.areal.workflow.ParaVTAgent"
"""The import path AReaL's rollout workers resolve (``trainer.train(workflow=...)``)."""
_SEPARATE_ENV = (
    "AReaL is not installed here. It pins torch and transformers versions that cannot share an "
    "environment with this project's [serve]/[train] stack: build the separate AReaL "
    "environment of docs/areal.md (requirements/areal.txt) and launch from it."
)


class UnjudgedRollout(RuntimeError):
    """The rollout failed or its answer cannot be judged; AReaL rejects the task."""


@dataclass(frozen=True)
class Interaction:
    """One completion the proxy records for a rollout, with the reward AReaL gives it."""

    agent: str  # "main" or "sub:<turn>:<index>"
    turn: int
    completion_tokens: int
    reward: float | None


@dataclass(frozen=True)
class RolloutOutcome:
    """What one graph run becomes for AReaL: the reward, what is trained, what is logged."""

    reward: float | None  # returned from run(); None -> UnjudgedRollout
    parts: RewardParts
    interactions: tuple[Interaction, ...]
    stats: dict[str, float]


def rollout_outcome(
    trace: Mapping[str, Any],
    *,
    target: Any,
    config: ParaGRPOConfig | None = None,
    discount: float = 1.0,
) -> RolloutOutcome:
    """Reward, recorded interactions and step metrics of one trace (``graphs.runs.traces.Trace``).

    Interactions are the model calls the proxy records, in trace order: main-agent turns, plus
    sub-agent calls with ``train_subagents``. The reward sits on the last; earlier ones get
    ``reward[i] = reward[i + 1] * discount`` (AReaL's backward propagation, unset rewards 0).
    """
    config = config or ParaGRPOConfig()
    parts = trace_reward(trace, target=target, settings=config.reward_settings())
    calls = [
        call
        for call in trace.get("model_calls", [])
        if call_role(call) == "main" or config.train_subagents
    ]
    rewards: list[float | None] = [None] * len(calls)
    if parts.total is not None:
        running = 0.0
        for i in reversed(range(len(calls))):
            running = running * discount + (parts.total if i == len(calls) - 1 else 0.0)
            rewards[i] = round(running, 6)
    interactions = tuple(
        Interaction(c["agent"], c["turn"], c["completion"]["usage"]["completion_tokens"], r)
        for c, r in zip(calls, rewards, strict=True)
    )
    main = [c for c in trace.get("model_calls", []) if call_role(c) == "main"]
    executed = sum(c["error"] is None for c in trace.get("tool_calls", []))
    judged = {"reward": parts.total, "accuracy": parts.accuracy, "format": parts.format}
    stats = {k: float(v) for k, v in {**judged, "tool": parts.tool}.items() if v is not None}
    stats |= {
        "used_tool": float(executed > 0),  # kappa, averaged over rollouts
        "tool_calls": float(executed),
        "turns": float(len(main)),
        "response_tokens": float(sum(c["completion"]["usage"]["completion_tokens"] for c in main)),
        "overview_frames": float((trace.get("settings") or {}).get("overview_frames", 0)),
        "degenerate": float(parts.degenerate),
    }
    return RolloutOutcome(parts.total, parts, interactions, stats)


@dataclass
class ProxyModel:
    """The graph's ``ChatModel`` on one proxy session: routes sub-agent requests (not recorded
    unless trained) and leaves the Think Prefix to the chat template."""

    main: ChatModel
    sub: ChatModel
    template_prefill: str | None

    async def complete(self, request: ModelRequest, *, on_text=None) -> Completion:
        if request.role != "main":
            return await self.sub.complete(request)
        if request.prefill != self.template_prefill:
            raise ValueError(
                f"the graph prefills {request.prefill!r} but the rollout chat template supplies "
                f"{self.template_prefill!r}; the AReaL proxy cannot continue a partial message"
            )
        return await self.main.complete(dataclasses.replace(request, prefill=None))


def worker_board_path() -> str:
    """One SQLite board per rollout worker process, in its temporary folder."""
    folder = Path(tempfile.gettempdir()) / "paravt-areal"
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / f"board-{os.getpid()}.sqlite")


class ParaVTAgent:
    """The AReaL agent workflow: one graph run per call on the proxy AReaL hands over.

    Built by AReaL from ``workflow_kwargs`` (the config's ``paravt`` block): ``grpo`` holds
    ``ParaGRPOConfig`` fields, ``context`` ``graphs.context.Context`` fields (the arm sets the
    Think Prefix, gating the overview frames, the recipe temperature and token cap).
    """

    def __init__(
        self,
        grpo: ParaGRPOConfig | Mapping[str, Any] | None = None,
        context: Context | Mapping[str, Any] | None = None,
        *,
        video_root: str | None = None,
        board_path: str | None = None,
        model: str = "default",
        timeout_s: float = 3600.0,
        log_stats: bool = True,
    ) -> None:
        self.grpo = grpo if isinstance(grpo, ParaGRPOConfig) else grpo_config(grpo or {})
        self.context = context if isinstance(context, Context) else Context(**(context or {}))
        self.video_root = video_root
        self.board_path = board_path or worker_board_path()
        self.model, self.timeout_s, self.log_stats = model, timeout_s, log_stats
        self._board: Board | None = None

    def __getstate__(self) -> dict[str, Any]:  # subproc mode pickles the agent
        return {**self.__dict__, "_board": None}

    @property
    def board(self) -> Board:
        if self._board is None:
            self._board = Board(self.board_path)
        return self._board

    async def run(self, data: Mapping[str, Any], **extra_kwargs: Any) -> float:
        """Run the graph on one row through AReaL's proxy; return the episode reward."""
        item = RLPrompt.from_data(data, self.video_root)
        context = self.grpo.rollout_context(item.id, epoch=item.epoch, base=self.context)
        main, sub = self._clients(extra_kwargs)
        try:
            model = ProxyModel(main, sub, template_prefill=self.grpo.prefill)
            result = await run_question(
                shared_graph(self.board),
                self.board,
                video_path=item.video,
                question=item.ask,
                context=RunContext.of(context, model),
            )
        finally:
            await asyncio.gather(main.aclose(), sub.aclose())
        outcome = rollout_outcome(result.trace or {}, target=item.target, config=self.grpo)
        if outcome.reward is None:
            why = result.error or "the answer or its gold target cannot be judged"
            raise UnjudgedRollout(f"prompt {item.id} run {result.run_id}: {why}")
        if self.log_stats:
            log_areal_stats(outcome.stats)
        return float(outcome.reward)

    def _clients(self, extra_kwargs: Mapping[str, Any]) -> tuple[OpenAIChatModel, OpenAIChatModel]:
        base_url = extra_kwargs.get("base_url") or os.environ.get("OPENAI_BASE_URL")
        api_key = extra_kwargs.get("api_key") or os.environ.get("OPENAI_API_KEY")
        if not base_url or not api_key:
            raise ValueError(
                "no proxy: AReaL passes base_url and api_key (inline mode) or sets "
                "OPENAI_BASE_URL and OPENAI_API_KEY (subproc mode)"
            )
        common = dict(
            api_key=api_key,
            model=self.model,  # the proxy ignores it and serves no /models
            timeout=self.timeout_s,
            max_retries=0,
            http_client=extra_kwargs.get("http_client"),
        )
        sub_body = None if self.grpo.train_subagents else {"store": False}
        return OpenAIChatModel(base_url, **common), OpenAIChatModel(
            base_url, **common, extra_body=sub_body
        )


def grpo_config(values: Mapping[str, Any]) -> ParaGRPOConfig:
    """``ParaGRPOConfig`` from YAML values (lists become the tuples the dataclass holds)."""
    known = {f.name for f in fields(ParaGRPOConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown ParaGRPOConfig fields {unknown}")
    return ParaGRPOConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


def log_areal_stats(stats: Mapping[str, float]) -> None:
    """Record step metrics in AReaL's stats tracker (rollout or eval-rollout scope)."""
    _require_areal()
    from areal.infra import workflow_context
    from areal.utils import stats_tracker

    scope = stats_tracker.get(workflow_context.stat_scope())
    scope.scalar(**{f"paravt_{key}": value for key, value in stats.items()})


def _require_areal() -> None:
    try:
        import areal  # noqa: F401
    except ImportError as exc:
        raise ImportError(_SEPARATE_ENV) from exc
