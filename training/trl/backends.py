"""Generation for graph rollouts under TRL: one request per model call, batched, on the
trainer's own backend (transformers ``generate``, or vLLM in server or colocate mode).

A :class:`GenRequest` is a rendered call (prompt ids with image placeholders expanded, the
image tensors and the same images as PIL); a backend returns the generated ids and one
sampling log-prob per id. :class:`Batcher` gathers the calls that concurrent graph episodes
make into batches, one batch at a time, so a backend sees many calls at once.

Log-probs are those of the distribution sampled from, after every logits processor:
``logits / temperature`` with the never-generated tokens masked, no top-k, no top-p (``top_p``
1, ``top_k`` 0, repetition penalty 1 are forced); a greedy call (temperature 0) gets
temperature-1 log-probs. vLLM reports them as its server's ``--logprobs-mode`` says
(``processed_logprobs`` is the matching one, as TRL itself warns).

Sampling is not seeded per call: a batch draws from one random stream, so which tokens a
call gets depends on the calls that share its batch (``training.cpu_grpo`` is the seeded loop).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import torch
from transformers import LogitsProcessor, LogitsProcessorList, TemperatureLogitsWarper

from training.policy import GenRequest, GenResult


def _groups(requests: Sequence[GenRequest], size: int) -> list[list[int]]:
    """Indices of requests that can share one generate call (same temperature and cap)."""
    keyed: dict[tuple[float, int], list[int]] = defaultdict(list)
    for i, r in enumerate(requests):
        keyed[(r.temperature, r.max_tokens)].append(i)
    return [idx[k : k + size] for idx in keyed.values() for k in range(0, len(idx), size)]


class _SampledLogprobs(LogitsProcessor):
    """Keeps the log-prob of each sampled token under the final processed scores (it runs
    last): the scores of step t are read once step t's token is known, at step t + 1."""

    def __init__(self) -> None:
        self.last: torch.Tensor | None = None
        self.values: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        self._take(input_ids[:, -1])
        self.last = torch.log_softmax(scores.float(), dim=-1)
        return scores

    def _take(self, tokens: torch.Tensor) -> None:
        if self.last is not None:
            self.values.append(self.last.gather(1, tokens[:, None]).squeeze(1))
            self.last = None

    def finish(self, sequences: torch.Tensor) -> torch.Tensor:
        self._take(sequences[:, -1])
        return torch.stack(self.values, dim=1)


class TransformersBackend:
    """``model.generate`` on the policy itself (unwrapped for generation by the caller), left
    padded, images batched as Qwen3-VL takes them."""

    def __init__(
        self,
        model: torch.nn.Module,
        *,
        eos_ids: Sequence[int],
        pad_id: int,
        image_token_id: int,
        suppress: Sequence[int] = (),
        max_batch: int = 64,
        autocast: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
    ) -> None:
        self.model, self.eos_ids, self.pad_id = model, list(eos_ids), pad_id
        self.image_token_id, self.suppress = image_token_id, list(suppress)
        self.max_batch, self.autocast = max_batch, autocast

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        out: list[GenResult | None] = [None] * len(requests)
        for idx in _groups(requests, self.max_batch):
            for i, result in zip(idx, self._batch([requests[i] for i in idx]), strict=True):
                out[i] = result
        return out  # type: ignore[return-value]

    def _batch(self, reqs: list[GenRequest]) -> list[GenResult]:
        device = next(self.model.parameters()).device
        if device.type == "cuda":  # this runs in a worker thread, whose current device is 0
            torch.cuda.set_device(device)
        width = max(len(r.prompt_ids) for r in reqs)
        ids = torch.full((len(reqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, r in enumerate(reqs):
            ids[row, width - len(r.prompt_ids) :] = torch.tensor(r.prompt_ids)
            mask[row, width - len(r.prompt_ids) :] = 1
        vision = {}
        with_images = [r.vision for r in reqs if r.vision]
        if with_images:
            vision = {k: torch.cat([v[k] for v in with_images]).to(device) for k in with_images[0]}
        temperature = reqs[0].temperature
        # generate() runs a custom processor before its own temperature warper, so the
        # temperature is applied here, ahead of the recorder, and generate() samples at 1.0
        sampling: dict[str, Any] = {"do_sample": False, "temperature": None, "top_p": None}
        processors: list[LogitsProcessor] = []
        if temperature > 0:
            sampling = {"do_sample": True, "temperature": 1.0, "top_p": 1.0}
            processors.append(TemperatureLogitsWarper(temperature))
        recorder = _SampledLogprobs()
        with torch.no_grad(), self.autocast():
            sequences = self.model.generate(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                mm_token_type_ids=(ids == self.image_token_id).long().to(device),
                **vision,
                max_new_tokens=reqs[0].max_tokens,
                eos_token_id=self.eos_ids,
                pad_token_id=self.pad_id,
                suppress_tokens=self.suppress or None,
                top_k=0,
                repetition_penalty=1.0,
                logits_processor=LogitsProcessorList([*processors, recorder]),
                **sampling,
            )
        logprobs = recorder.finish(sequences).cpu()
        results = []
        for row, new in enumerate(sequences[:, width:].cpu().tolist()):
            ends = [k for k, token in enumerate(new) if token in self.eos_ids]
            n = ends[0] + 1 if ends else len(new)
            results.append(GenResult(tuple(new[:n]), tuple(logprobs[row, :n].tolist())))
        return results


class VLLMServerBackend:
    """TRL's vLLM client (``trl vllm-serve``): token ids in, images sent as server features."""

    def __init__(self, vllm_generation: Any, max_batch: int = 64) -> None:
        self.vllm, self.max_batch = vllm_generation, max_batch

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        client, out = self.vllm.vllm_client, [None] * len(requests)
        for idx in _groups(requests, self.max_batch):
            reqs = [requests[i] for i in idx]
            features = None
            if any(r.images for r in reqs):
                raw = client.image_features([list(r.images) or None for r in reqs])
                features = [
                    self.vllm._place_features(f, list(r.prompt_ids))
                    for f, r in zip(raw, reqs, strict=True)
                ]
            done = client.generate(
                prompts=[list(r.prompt_ids) for r in reqs],
                features=features,
                n=1,
                temperature=reqs[0].temperature,
                top_p=1.0,
                top_k=0,
                repetition_penalty=1.0,
                max_tokens=reqs[0].max_tokens,
                logprobs=0,
                generation_kwargs=self.vllm.generation_kwargs,
            )
            for i, ids, lps in zip(idx, done["completion_ids"], done["logprobs"], strict=True):
                out[i] = GenResult(tuple(ids), tuple(float(lp[0]) for lp in lps))
        return out  # type: ignore[return-value]


class VLLMColocateBackend:
    """The vLLM engine TRL runs in this process (``vllm_mode="colocate"``, one GPU per rank)."""

    def __init__(self, vllm_generation: Any, max_batch: int = 64) -> None:
        self.vllm, self.max_batch = vllm_generation, max_batch

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        from trl.generation.vllm_generation import extract_logprobs
        from vllm import SamplingParams

        out = [None] * len(requests)
        for idx in _groups(requests, self.max_batch):
            reqs, rows = [requests[i] for i in idx], []
            for r in reqs:
                row: dict[str, Any] = {"prompt_token_ids": list(r.prompt_ids)}
                if r.images:
                    images = list(r.images)
                    row["multi_modal_data"] = {"image": images if len(images) > 1 else images[0]}
                rows.append(row)
            params = SamplingParams(
                n=1,
                temperature=reqs[0].temperature,
                top_p=1.0,
                top_k=0,
                repetition_penalty=1.0,
                max_tokens=reqs[0].max_tokens,
                logprobs=0,
                **self.vllm.generation_kwargs,
            )
            done = self.vllm.llm.generate(rows, sampling_params=params, use_tqdm=False)
            logprobs, _ = extract_logprobs(done)
            for i, output, lps in zip(idx, done, logprobs, strict=True):
                ids = output.outputs[0].token_ids
                out[i] = GenResult(tuple(ids), tuple(float(lp[0]) for lp in lps))
        return out  # type: ignore[return-value]
