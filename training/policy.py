"""What every RL engine shares: a model call rendered for the policy (``GenRequest``) and what
it generated, the batcher that gathers concurrent episodes' calls for a backend, the policy
as a ``ChatModel`` that records every call, and an episode's training rows.

TRL (``training.trl``) and AReaL's engine-level workflow (``training.areal.engine``) build
on these; the CPU loop (``training.cpu_grpo``) samples in-process through
``training.recording`` instead.

Every model call of an episode goes through :class:`PolicyChatModel`: it renders the request
as the server does (``serving.engine.ChatRenderer``, the checkpoint's chat template, the
Think Prefix as a continued assistant message), hands the ids to the generation backend
through the :class:`Batcher` and records prompt ids, completion ids, sampling log-probs,
image tensors and role (``training.recording.SampledCall``).

Episode -> rows (:func:`chain_turns`). The main agent's turns are concatenated into one
sequence while each turn's prompt starts with the sequence so far, token for token: what
lies between (the end of the turn, the ``<tool_response>`` user message, the next header and
Think Prefix) is the tail of the next prompt, sampled by no one, so its ``env_mask`` is 0;
the generated ids are 1. The sequence holds exactly the ids each turn was sampled after.
Where a prompt does not extend the chain (the graph re-renders earlier turns from text, and
a sampled non-canonical tokenisation does not survive that), a new row starts. Each row
carries the image tensors of its last prompt (which holds every image of the row, in order).
A failed episode (an endpoint error) is unscorable: every mask 0.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import torch
from PIL import Image

from agents.client.completion import Completion, EndpointError, Usage
from agents.requests import ModelRequest, Role
from serving.detokenize import reply_text
from serving.engine import ChatRenderer, RequestError
from serving.messages import convert_messages
from training.recording import SampledCall
from training.rollout import Trajectory, Turn


@dataclass(frozen=True)
class GenRequest:
    """One model call, rendered."""

    prompt_ids: tuple[int, ...]
    vision: Mapping[str, torch.Tensor] = field(default_factory=dict, hash=False)
    images: tuple[Image.Image, ...] = field(default=(), hash=False)  # the same images, as PIL
    temperature: float = 1.0
    max_tokens: int = 16
    role: str = "main"  # agents.requests.Role, and the turn (scripted test backends read them)
    turn: int = 0


@dataclass(frozen=True)
class GenResult:
    token_ids: tuple[int, ...]  # the end token included when one was emitted
    logprobs: tuple[float, ...]  # one per token, as sampled


class Backend(Protocol):
    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]: ...


class Batcher:
    """Calls of concurrent episodes -> backend batches, one batch in flight at a time.

    A call waits ``linger_s`` for company; calls arriving while a batch generates form the
    next one. The backend runs in a worker thread, off the event loop.
    """

    def __init__(self, backend: Backend, *, max_batch: int = 64, linger_s: float = 0.01) -> None:
        self.backend, self.max_batch, self.linger_s = backend, max_batch, linger_s
        self._pending: list[tuple[GenRequest, asyncio.Future]] = []
        self._worker: asyncio.Task | None = None
        self.batches: list[int] = []  # size of every batch sent (for logs and tests)

    async def submit(self, request: GenRequest) -> GenResult:
        future = asyncio.get_running_loop().create_future()
        self._pending.append((request, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._pending:
            await asyncio.sleep(self.linger_s)
            batch = self._pending[: self.max_batch]
            del self._pending[: len(batch)]
            self.batches.append(len(batch))
            try:
                results = await asyncio.to_thread(self.backend.generate, [r for r, _ in batch])
            except Exception as exc:  # every waiting call fails with the backend's error
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)


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
        self.records: list[SampledCall] = []
        self._render_lock = render_lock or threading.Lock()  # HF fast tokenizers: one thread

    def fork(self) -> PolicyChatModel:
        """A model with its own (empty) records over the same backend and render lock."""
        return PolicyChatModel(
            self.renderer,
            self.batcher,
            end_ids=self.end_ids,
            max_len=self.max_len,
            name=self.name,
            render_lock=self._render_lock,
        )

    async def complete(self, request: ModelRequest, *, on_text=None) -> Completion:
        params, began = request.params, time.perf_counter()
        if params.top_p < 1.0 or params.stop:
            raise ValueError("training samples with top_p 1 and no stop strings (TRL's loss)")
        prompt, images = await asyncio.to_thread(self._render, request)
        if len(prompt.input_ids) + params.max_tokens > self.max_len:
            raise EndpointError(
                f"a {len(prompt.input_ids)}-token prompt and max_tokens {params.max_tokens} "
                f"exceed the context of {self.max_len}",
                base_url=IN_TRAINER,
                status=400,
            )
        result = await self.batcher.submit(
            GenRequest(
                tuple(prompt.input_ids),
                prompt.vision,
                tuple(images),
                params.temperature,
                params.max_tokens,
                request.role,
                request.turn,
            )
        )
        text, ended, _ = reply_text(
            self.renderer.tokenizer, result.token_ids, self.end_ids, (), skip_special_tokens=False
        )
        finish = "stop" if ended or len(result.token_ids) < params.max_tokens else "length"
        record = SampledCall(
            prompt_ids=tuple(prompt.input_ids),
            token_ids=result.token_ids,
            logprobs=result.logprobs,
            vision=prompt.vision,
            temperature=params.temperature if params.temperature > 0 else 1.0,
            prefill=request.prefill,
            role=request.role,
        )
        self.records.append(record)  # one event loop: no lock needed
        if on_text is not None and text:
            on_text(text)
        return Completion(
            text=text,
            finish_reason=finish,
            usage=Usage(len(prompt.input_ids), len(result.token_ids), prompt.image_tokens, 0),
            latency_s=round(time.perf_counter() - began, 4),
            model=self.name,
            attempts=1,
            prompt_token_ids=record.prompt_ids,
            token_ids=record.token_ids,
            logprobs=record.logprobs,
        )

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

    def find(self, prompt_ids: Any, token_ids: Any) -> SampledCall:
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

    agent: str  # the trace's name for the caller: "main", "sub:<turn>:<index>" or "none"
    role: Role | None  # whose turns the row holds; None for the placeholder row
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
    return Row(
        turn.agent,
        turn.role,
        turn.prompt_ids,
        turn.completion_ids,
        (1,) * n,
        turn.old_logprobs,
        turn.vision,
    )


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
        rows = [Row("none", None, (pad_id,), (pad_id,), (0,), (0.0,), {})]
    if t.trace.get("status") == "failed":
        rows = [row.masked() for row in rows]
    return rows
