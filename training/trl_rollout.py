"""TRL's ``rollout_func`` for PARA-GRPO: one graph episode per prompt entry, mapped onto
TRL's one-completion-per-prompt contract without re-tokenising anything.

Every model call of an episode goes through :class:`PolicyChatModel`: it renders the request
as the server does (``serving.engine.ChatRenderer``, the checkpoint's chat template, the
Think Prefix as a continued assistant message), hands the ids to the trainer's generation
backend (``training.trl_backends``) and records prompt ids, completion ids, sampling
log-probs, image tensors and role (``training.recording.CallRecord``).

Episode -> rows (:func:`chain_turns`). The main agent's turns are concatenated into one
sequence while each turn's prompt starts with the sequence so far, token for token: what
lies between (the end of the turn, the ``<tool_response>`` user message, the next header and
Think Prefix) is the tail of the next prompt, sampled by no one, so its ``env_mask`` is 0;
the generated ids are 1. The sequence holds exactly the ids each turn was sampled after.
Where a prompt does not extend the chain (the graph re-renders earlier turns from text, and
a sampled non-canonical tokenisation does not survive that), a new row starts. The first
row is TRL's completion for the entry; further rows, and one row per sub-agent call when
``train_subagents``, are appended to the batch after scoring with the episode's advantage
(``training.trl_trainer``). Verify-gate calls are never trained. A failed episode (an
endpoint error) is unscorable: reward None, advantage 0, every mask 0.

Images: each row carries the image tensors of its last prompt (which holds every image of
the row, in order); the trainer puts them in the forward pass, so nothing reaches TRL's own
processor.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from agents.completion import Completion, EndpointError, Usage
from agents.requests import ModelRequest
from graphs.board import Board
from graphs.bound import bound, shared_graph
from graphs.context import Context
from graphs.run import run_question
from serving.detokenize import reply_text
from serving.engine import ChatRenderer, RequestError
from serving.messages import convert_messages
from training.para_grpo import ParaGRPOConfig, trace_reward
from training.questions import RLPrompt
from training.recording import CallRecord
from training.rollout import OBJECTIVES, Trajectory, Turn, build_trajectory, rollout_metrics
from training.trl_backends import Batcher, GenRequest

log = logging.getLogger(__name__)
IN_TRAINER = "in-trainer://policy"


class PolicyChatModel:
    """``ChatModel`` over the trainer's generation backend; records every call."""

    def __init__(
        self,
        renderer: ChatRenderer,
        batcher: Batcher,
        *,
        end_ids: Sequence[int],
        max_len: int,
        name: str = "policy",
        render_lock: threading.Lock | None = None,
    ) -> None:
        self.renderer, self.batcher, self.end_ids = renderer, batcher, list(end_ids)
        self.max_len, self.name = max_len, name
        self.records: list[CallRecord] = []
        self._render_lock = render_lock or threading.Lock()  # HF fast tokenizers: one thread

    def fork(self) -> PolicyChatModel:
        """A model with its own (empty) records over the same backend and render lock."""
        return PolicyChatModel(
            self.renderer, self.batcher, end_ids=self.end_ids, max_len=self.max_len,
            name=self.name, render_lock=self._render_lock,
        )  # fmt: skip

    async def complete(self, request: ModelRequest, *, on_text=None) -> Completion:
        params, began = request.params, time.perf_counter()
        if params.top_p < 1.0 or params.stop:
            raise ValueError("training samples with top_p 1 and no stop strings (TRL's loss)")
        prompt, images = await asyncio.to_thread(self._render, request)
        if len(prompt.input_ids) + params.max_tokens > self.max_len:
            raise EndpointError(
                f"a {len(prompt.input_ids)}-token prompt and max_tokens {params.max_tokens} "
                f"exceed the context of {self.max_len}", base_url=IN_TRAINER, status=400,
            )  # fmt: skip
        result = await self.batcher.submit(
            GenRequest(
                tuple(prompt.input_ids), prompt.vision, tuple(images), params.temperature,
                params.max_tokens, request.role, request.turn,
            )
        )  # fmt: skip
        text, ended, _ = reply_text(
            self.renderer.tokenizer, result.token_ids, self.end_ids, (), skip_special_tokens=False
        )
        finish = "stop" if ended or len(result.token_ids) < params.max_tokens else "length"
        record = CallRecord(
            prompt_ids=tuple(prompt.input_ids), token_ids=result.token_ids,
            logprobs=result.logprobs, vision=prompt.vision,
            temperature=params.temperature if params.temperature > 0 else 1.0,
            prefill=request.prefill, role=request.role,
        )  # fmt: skip
        self.records.append(record)  # one event loop: no lock needed
        if on_text is not None and text:
            on_text(text)
        return Completion(
            text=text,
            finish_reason=finish,
            usage=Usage(len(prompt.input_ids), len(result.token_ids), prompt.image_tokens, 0),
            latency_s=round(time.perf_counter() - began, 4), model=self.name, attempts=1,
            prompt_token_ids=record.prompt_ids, token_ids=record.token_ids,
            logprobs=record.logprobs,
        )  # fmt: skip

    def _render(self, request: ModelRequest):
        messages, prefill = request.wire(), request.prefill
        sent = [*messages, {"role": "assistant", "content": prefill}] if prefill else messages
        try:
            with self._render_lock:
                chat, images = convert_messages(sent)
                prompt = self.renderer.build_prompt(
                    chat, images, continue_final_message=prefill is not None
                )
        except RequestError as exc:  # what the HTTP server answers with a 400
            raise EndpointError(exc.message, base_url=IN_TRAINER, status=400) from exc
        return prompt, images

    def find(self, prompt_ids: Any, token_ids: Any) -> CallRecord:
        """The record of the call that returned ``token_ids`` for ``prompt_ids``."""
        key = (tuple(prompt_ids), tuple(token_ids))
        for record in self.records:
            if record.key == key:
                return record
        raise KeyError(f"no recorded call for a {len(key[0])}-token prompt")


@dataclass(frozen=True)
class Row:
    """One trained sequence: ``prompt_ids`` then ``completion_ids``, ``env_mask`` 1 on the
    ids the policy sampled (their sampling ``logprobs``; 0.0 on the others)."""

    agent: str  # "main" or "sub:<turn>:<index>"
    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    env_mask: tuple[int, ...]
    logprobs: tuple[float, ...]
    vision: Mapping[str, torch.Tensor]
    turns: int = 1  # model calls in the row

    @property
    def images(self) -> int:
        grid = self.vision.get("image_grid_thw")
        return 0 if grid is None else int(grid.shape[0])

    def masked(self) -> Row:
        """The same row with nothing trained (a failed episode's)."""
        return replace(self, env_mask=(0,) * len(self.env_mask))


def _row(turn: Turn) -> Row:
    n = len(turn.completion_ids)
    return Row(turn.agent, turn.prompt_ids, turn.completion_ids, (1,) * n, turn.old_logprobs,
               turn.vision)  # fmt: skip


def _same_images(earlier: Mapping[str, torch.Tensor], later: Mapping[str, torch.Tensor]) -> bool:
    """The images of ``earlier`` are the first images of ``later``, pixel for pixel."""
    if not earlier:
        return True
    grid_a, grid_b = earlier["image_grid_thw"], later.get("image_grid_thw")
    if grid_b is None or len(grid_b) < len(grid_a):
        return False
    if not torch.equal(grid_b[: len(grid_a)], grid_a):
        return False
    pixels = earlier["pixel_values"]
    return torch.equal(later["pixel_values"][: len(pixels)], pixels)


def chain_turns(turns: Sequence[Turn]) -> list[Row]:
    """Consecutive turns as few rows as token-exact chaining allows (module docstring)."""
    rows: list[Row] = []
    for turn in turns:
        last = rows[-1] if rows else None
        full = (*last.prompt_ids, *last.completion_ids) if last else ()
        if last and turn.prompt_ids[: len(full)] == full and _same_images(last.vision, turn.vision):
            injected = turn.prompt_ids[len(full) :]
            rows[-1] = replace(
                last,
                completion_ids=(*last.completion_ids, *injected, *turn.completion_ids),
                env_mask=(*last.env_mask, *(0,) * len(injected), *(1,) * len(turn.completion_ids)),
                logprobs=(*last.logprobs, *(0.0,) * len(injected), *turn.old_logprobs),
                vision=turn.vision,
                turns=last.turns + 1,
            )
        else:
            rows.append(_row(turn))
    return rows


@dataclass
class Episode:
    """One entry's graph run: its trajectory, its rows (``rows[0]`` is TRL's completion)."""

    trajectory: Trajectory
    rows: list[Row]
    reward: float | None  # the objective the advantage comes from

    @property
    def extra_rows(self) -> list[Row]:
        return self.rows[1:]


def episode_rows(t: Trajectory, *, subagents: bool, pad_id: int) -> list[Row]:
    """The rows of one trajectory; a placeholder row when the main agent never answered."""
    rows = chain_turns(t.turns)
    if subagents:
        rows += [_row(turn) for turn in t.sub_turns if turn.completion_ids]
    if not rows:
        rows = [Row("none", (pad_id,), (pad_id,), (0,), (0.0,), {})]
    if t.trace.get("status") == "failed":
        rows = [row.masked() for row in rows]
    return rows


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
                with bound(fork):
                    result = await run_question(
                        graph, self.board, video_path=prompt.video, question=prompt.question,
                        options=prompt.options, kind=prompt.kind, prompt=prompt.prompt,
                        system=prompt.system, context=context,
                    )  # fmt: skip
            t = build_trajectory(prompt, index, context, result.trace, fork)
            t.parts = trace_reward(t.trace, target=prompt.target, settings=settings)
            t.reward = self.objective(t) if t.trace["status"] != "failed" else None
            rows = episode_rows(t, subagents=self.algo.train_subagents, pad_id=pad_id)
            return Episode(t, rows, t.reward)

        return await asyncio.gather(*(one(i, self.table[key]) for i, key in enumerate(ids)))

    def __call__(self, prompts: list[str], trainer) -> dict[str, list]:
        from training.trl_trainer import policy_model  # the trainer's backend, per call

        with policy_model(trainer) as model:
            epoch = int(trainer.state.epoch or 0)
            self.last = asyncio.run(self.episodes(prompts, model, epoch=epoch))
        real = next((r for e in self.last for r in e.rows if r.agent != "none"), None)
        for episode in self.last:  # a placeholder becomes a masked real row: same shapes,
            if real is not None and episode.rows[0].agent == "none":  # images, collectives
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
        main_rows = sum(sum(r.agent == "main" for r in e.rows) for e in self.last)
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
