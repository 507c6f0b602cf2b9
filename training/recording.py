"""A ChatModel that samples in-process from the policy being trained and records every call.

``RecordingChatModel`` speaks the same ``complete(request)`` contract as
``agents.client.llm.OpenAIChatModel``, so the graph runs unchanged, but instead of HTTP it renders
the request exactly as ``serving.server`` does (``convert_messages`` then
``LocalVLM.build_prompt``, with a prefill sent as a final assistant message continued with
``continue_final_message``) and generates with ``LocalVLM.generate`` on the live weights.
Each call is recorded: prompt ids (prefill included), completion ids, the sampling log-probs
and the image tensors, so training can recompute log-probs on exactly the same inputs.

Log-probs are those of the distribution sampled from: logits / temperature, never-generated
tokens masked, no top-k (forced to 0) and no top-p truncation (``top_p`` must be 1); a greedy
call (temperature 0) records temperature-1 log-probs. :func:`token_logprobs` recomputes the
same quantity with gradients. (The HTTP server's default ``logprobs_mode="raw"`` is the
temperature-1 distribution instead.)

Thread safety: the graph calls ``complete`` concurrently (one task per sub-agent). Rendering
runs under a lock shared by every fork (HF fast tokenizers are not safe to share between
threads), generation is serialised by ``LocalVLM.lock``, and records are appended under the
fork's own lock. :meth:`RecordingChatModel.fork` gives each rollout its own record list over
the same model.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from agents.client.completion import Completion, EndpointError, Usage
from agents.requests import ModelRequest
from serving.engine import GenerationSettings, LocalVLM, Prompt, RequestError
from serving.messages import convert_messages

IN_PROCESS = "in-process://policy"


@dataclass(frozen=True)
class SampledCall:
    """One model call as sampled: what the policy saw and what it produced."""

    prompt_ids: tuple[int, ...]  # with image placeholders expanded and the prefill at the end
    token_ids: tuple[int, ...]  # generated tokens, the end token included when one was emitted
    logprobs: tuple[float, ...]  # one per generated token, at `temperature`
    vision: Mapping[str, torch.Tensor]  # pixel_values / image_grid_thw ({} without images)
    temperature: float  # of the log-probs: the sampling temperature, 1.0 for greedy calls
    prefill: str | None
    role: str = "main"  # agents.requests.Role of the request

    @property
    def key(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """How a trace's completion record finds its call: (prompt ids, completion ids)."""
        return self.prompt_ids, self.token_ids


def call_seed(rollout_seed: int, index: int) -> int:
    """The sampling seed of a rollout's ``index``-th call (independent of thread timing)."""
    digest = hashlib.blake2b(f"{rollout_seed}:{index}".encode(), digest_size=7).digest()
    return int.from_bytes(digest, "big")


class RecordingChatModel:
    """``ChatModel`` over a ``LocalVLM`` whose ``model`` is the policy; records every call.

    ``seed`` makes the rollout reproducible: call ``i`` samples with :func:`call_seed`
    (``seed``, ``i``) unless the request carries its own seed. Without it, sampling draws from
    torch's global generator.
    """

    def __init__(
        self,
        vlm: LocalVLM,
        *,
        seed: int | None = None,
        name: str = "policy",
        render_lock: threading.Lock | None = None,
    ) -> None:
        self.vlm, self.seed, self.name = vlm, seed, name
        self.records: list[SampledCall] = []
        self._render_lock = render_lock or threading.Lock()
        self._lock = threading.Lock()
        self._calls = 0

    def fork(self, *, seed: int | None = None) -> RecordingChatModel:
        """A recorder with its own (empty) records over the same model and render lock."""
        return RecordingChatModel(
            self.vlm, seed=seed, name=self.name, render_lock=self._render_lock
        )

    async def complete(self, request: ModelRequest, *, on_text=None) -> Completion:
        with self._lock:
            index, self._calls = self._calls, self._calls + 1
        params = request.params
        seed = params.seed
        if seed is None and self.seed is not None:
            seed = call_seed(self.seed, index)
        completion = await asyncio.to_thread(self._complete, request, seed)
        if on_text is not None and completion.text:
            on_text(completion.text)
        return completion

    def _complete(self, request: ModelRequest, seed: int | None) -> Completion:
        messages, params, prefill = request.wire(), request.params, request.prefill
        if params.top_p < 1.0:
            raise ValueError("recorded log-probs assume top_p == 1 (no nucleus truncation)")
        began = time.perf_counter()
        sent = [*messages, {"role": "assistant", "content": prefill}] if prefill else messages
        settings = GenerationSettings(
            max_tokens=params.max_tokens,
            temperature=params.temperature,
            top_p=1.0,
            top_k=0,
            seed=seed,
            stop=params.stop,
            logprobs=True,
            logprobs_mode="processed",
        )
        try:
            with self._render_lock:
                chat, images = convert_messages(sent)
                prompt = self.vlm.build_prompt(
                    chat, images, continue_final_message=prefill is not None
                )
            done = self._sample(prompt, settings)
        except RequestError as exc:  # what the HTTP server answers with a 400
            raise EndpointError(exc.message, base_url=IN_PROCESS, status=400) from exc
        logprobs = tuple(entry["logprob"] for entry in done.logprobs or ())
        record = SampledCall(
            prompt_ids=tuple(prompt.input_ids),
            token_ids=tuple(done.token_ids),
            logprobs=logprobs,
            vision=prompt.vision,
            temperature=params.temperature if params.temperature > 0 else 1.0,
            prefill=prefill,
            role=request.role,
        )
        with self._lock:
            self.records.append(record)
        return Completion(
            text=done.text,
            finish_reason=done.finish_reason,
            usage=Usage(
                prompt_tokens=len(prompt.input_ids),
                completion_tokens=len(done.token_ids),
                image_tokens=prompt.image_tokens,
                cached_tokens=0,
            ),
            latency_s=round(time.perf_counter() - began, 4),
            model=self.name,
            attempts=1,
            prompt_token_ids=record.prompt_ids,
            token_ids=record.token_ids,
            logprobs=logprobs,
        )

    def _sample(self, prompt: Prompt, settings: GenerationSettings):
        """One generation on the live weights (tests override this to script a turn)."""
        return self.vlm.generate(prompt, settings)

    def find(self, prompt_ids: Any, token_ids: Any) -> SampledCall:
        """The record of the call that returned ``token_ids`` for ``prompt_ids``."""
        key = (tuple(prompt_ids), tuple(token_ids))
        with self._lock:
            for record in self.records:
                if record.key == key:
                    return record
        raise KeyError(f"no recorded call for a {len(key[0])}-token prompt")


def token_logprobs(
    vlm: LocalVLM,
    model: torch.nn.Module,
    prompt_ids: list[int] | tuple[int, ...],
    completion_ids: list[int] | tuple[int, ...],
    vision: Mapping[str, torch.Tensor],
    *,
    temperature: float,
) -> torch.Tensor:
    """``[T]`` log-probs of ``completion_ids`` after ``prompt_ids`` under ``model``, computed
    as sampling computed them (see the module docstring); differentiable unless under
    ``torch.no_grad``. ``vlm`` supplies the image token id and the never-generated tokens.
    """
    ids = torch.tensor([[*prompt_ids, *completion_ids]])
    n = len(completion_ids)
    out = model(
        input_ids=ids,
        attention_mask=torch.ones_like(ids),
        mm_token_type_ids=(ids == vlm.image_token_id).long(),
        **vision,
        logits_to_keep=n + 1,
    )
    logits = out.logits[0, :n].float() / temperature  # position t predicts token t + 1
    if vlm.suppress:
        logits[:, vlm.suppress] = float("-inf")
    target = torch.tensor(completion_ids).unsqueeze(1)
    return torch.log_softmax(logits, dim=-1).gather(1, target).squeeze(1)
