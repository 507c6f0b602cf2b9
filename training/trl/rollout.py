"""TRL's ``rollout_func`` for PARA-GRPO: one graph episode per prompt entry, mapped onto
TRL's one-completion-per-prompt contract without re-tokenising anything.

Every model call goes through the trainer's generation backend as a recording
``training.policy.PolicyChatModel`` (``policy_model``); an episode's turns become rows by
``training.policy.episode_rows``. The first row is TRL's completion for the entry; further
rows, and one row per sub-agent call when ``train_subagents``, are appended to the batch after
scoring with the episode's advantage (``training.trl.trainer``). Verify-gate calls are never
trained. A failed episode (an endpoint error) is unscorable: reward None, advantage 0, every
mask 0. Each row carries its image tensors; the trainer puts them in the forward pass, so
nothing reaches TRL's own processor.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from graphs.context import Context, RunContext
from graphs.runs.run import run_question, shared_graph
from graphs.store.sqlite_board import Board
from serving.detokenize import END_TOKENS
from training.para_grpo import ParaGRPOConfig, trace_reward
from training.policy import Batcher, Episode, PolicyChatModel, episode_rows
from training.questions import RLPrompt
from training.rollout import OBJECTIVES, build_trajectory, rollout_metrics

log = logging.getLogger(__name__)


class ParaVTRollout:
    """The ``rollout_func``: ``prompts`` (RLPrompt ids, each repeated G times by TRL) ->
    one episode each through the shared graph, scored by ``trace_reward``."""

    def __init__(
        self,
        prompts: Sequence[RLPrompt],
        algo: ParaGRPOConfig,
        board: Board,
        *,
        context: Context | None = None,
        objective: str = "paravt",
        concurrency: int = 16,
        regate_each_epoch: bool = False,
    ) -> None:
        self.table = {p.id: p for p in prompts}
        if len(self.table) != len(prompts):
            raise ValueError("training prompts need unique ids (TRL passes only the id)")
        self.algo, self.board, self.context = algo, board, context or Context()
        if algo.train_subagents:  # TRL scores every row at one temperature: the main one
            self.context = replace(self.context, subagent_temperature=algo.temperature)
        self.objective, self.concurrency = OBJECTIVES[objective], concurrency
        self.regate_each_epoch = regate_each_epoch
        self.last: list[Episode] = []  # the batch of the latest call (the trainer reads it)

    def context_for(self, prompt: RLPrompt, epoch: int) -> Context:
        epoch = epoch if self.regate_each_epoch else prompt.epoch
        return replace(
            self.algo.rollout_context(prompt.id, epoch=epoch, base=self.context), seed=None
        )

    async def episodes(self, ids: Sequence[str], model: PolicyChatModel, *, epoch: int = 0):
        """One graph run per id (concurrently), each calling its own fork of ``model``."""
        limit, graph = asyncio.Semaphore(self.concurrency), shared_graph(self.board)
        settings = self.algo.reward_settings()
        pad_id = model.renderer.tokenizer.pad_token_id

        async def one(index: int, prompt: RLPrompt) -> Episode:
            context = self.context_for(prompt, epoch)
            async with limit:
                fork = model.fork()
                result = await run_question(
                    graph,
                    self.board,
                    video_path=prompt.video,
                    question=prompt.ask,
                    context=RunContext.of(context, fork),
                )
            t = build_trajectory(prompt, index, context, result.trace, fork)
            t.parts = trace_reward(t.trace, target=prompt.target, settings=settings)
            t.reward = self.objective(t) if t.trace["status"] != "failed" else None
            rows = episode_rows(t, subagents=self.algo.train_subagents, pad_id=pad_id)
            return Episode(t, rows, t.reward)

        return await asyncio.gather(*(one(i, self.table[key]) for i, key in enumerate(ids)))

    def __call__(self, prompts: list[str], trainer) -> dict[str, list]:
        with policy_model(trainer) as model:
            epoch = int(trainer.state.epoch or 0)
            self.last = asyncio.run(self.episodes(prompts, model, epoch=epoch))
        real = next((r for e in self.last for r in e.rows if r.role is not None), None)
        for episode in self.last:  # a placeholder becomes a masked real row: same shapes,
            if real is not None and episode.rows[0].role is None:  # images, collectives
                episode.rows[0] = replace(real.masked(), agent="none")
        first = [e.rows[0] for e in self.last]
        return {
            "prompt_ids": [list(r.prompt_ids) for r in first],
            "completion_ids": [list(r.completion_ids) for r in first],
            "logprobs": [list(r.logprobs) for r in first],
            "env_mask": [list(r.env_mask) for r in first],
            "paravt_reward": [e.reward for e in self.last],
        }

    def metrics(self) -> dict[str, float]:
        """PARA-GRPO's per-step numbers for this process's batch (``rollout_metrics``) and
        how episodes became rows."""
        trajs = [e.trajectory for e in self.last]
        out = {k: v for k, v in rollout_metrics(trajs).items() if v is not None}
        main_turns = sum(len(t.turns) for t in trajs)
        main_rows = sum(sum(r.role == "main" for r in e.rows) for e in self.last)
        out["rows_per_episode"] = sum(len(e.rows) for e in self.last) / max(len(self.last), 1)
        out["chain_breaks"] = (main_rows - sum(bool(t.turns) for t in trajs)) / max(main_turns, 1)
        return out


def paravt_objective(completions: Sequence[Any], paravt_reward: Sequence[Any], **kwargs: Any):
    """TRL reward: the objective each episode's rollout computed (None: cannot judge, which
    TRL turns into advantage 0). ``trace_reward``'s parts are logged by the trainer.

    >>> paravt_objective(["a", "b"], paravt_reward=[1.5, None])
    [1.5, None]
    """
    return list(paravt_reward)


@contextmanager
def policy_model(trainer: Any) -> Iterator[PolicyChatModel]:
    """A ``ChatModel`` over the trainer's own generation backend (``training.trl.trainer``),
    for one rollout."""
    tok = trainer.renderer.tokenizer
    ends = sorted({*trainer.eos_token_ids, *(tok.convert_tokens_to_ids(t) for t in END_TOKENS)})
    text = trainer.accelerator.unwrap_model(trainer.model).config.get_text_config()
    with trainer.generation_backend(ends) as backend:
        batcher = Batcher(backend, max_batch=trainer.max_batch)
        yield PolicyChatModel(
            trainer.renderer,
            batcher,
            end_ids=ends,
            max_len=getattr(text, "max_position_embeddings", 32768),
        )
