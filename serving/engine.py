"""One Qwen3-VL checkpoint on the CPU: loading, prompt token ids, serialised generation.

Knows nothing of HTTP: ``serving.server`` turns OpenAI requests into chat-template messages,
PIL images and ``GenerationSettings``, and maps ``RequestError`` to a 400.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from transformers import (
    AutoImageProcessor,
    AutoModelForImageTextToText,
    AutoTokenizer,
    StoppingCriteria,
    StoppingCriteriaList,
)

from serving.chat_render import ChatRenderer, Prompt, RequestError, text_only_content
from serving.detokenize import END_TOKENS as _END_TOKENS
from serving.detokenize import TextPieces, reply_text

#: Vision tokens are never generated: text holding them cannot be sent back as a prompt.
_NEVER_GENERATE = ("<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>")


def never_generated(tokenizer, vocab_size: int) -> list[int]:
    """Token ids sampling must never produce: vision placeholders and the unused tail of the
    embedding matrix (ids the tokenizer does not know)."""
    never = [tokenizer.convert_tokens_to_ids(t) for t in _NEVER_GENERATE]
    return sorted({i for i in never if i is not None} | set(range(len(tokenizer), vocab_size)))


@dataclass(frozen=True)
class GenerationSettings:
    """What to generate: ``None`` takes the checkpoint's generation config (or a default)."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None
    seed: int | None = None
    stop: Sequence[str] = ()
    logprobs: bool = False
    top_logprobs: int = 0
    logprobs_mode: Literal["raw", "processed"] = "raw"
    skip_special_tokens: bool = False


@dataclass
class Completion:
    """One generated choice."""

    token_ids: list[int]
    text: str
    finish_reason: Literal["stop", "length"]
    logprobs: list[dict[str, Any]] | None


class _StopOnText(StoppingCriteria):
    """Stops once the generated text contains any of ``stops``."""

    def __init__(self, tokenizer, prompt_len: int, stops: list[str]) -> None:
        self.tokenizer, self.prompt_len, self.stops = tokenizer, prompt_len, stops
        self.window = max(len(s) for s in stops) + 8

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs) -> torch.Tensor:
        tail = input_ids[0, max(self.prompt_len, input_ids.shape[1] - self.window) :]
        text = self.tokenizer.decode(tail, skip_special_tokens=False)
        done = any(stop in text for stop in self.stops)
        return torch.full((input_ids.shape[0],), done, dtype=torch.bool)


class LocalVLM(ChatRenderer):
    """One Qwen-VL checkpoint on the CPU: prompt building and serialised generation."""

    def __init__(
        self, model_dir: str | Path, *, threads: int = 1, default_max_tokens: int = 2048
    ) -> None:
        self.threads, self.default_max_tokens = threads, default_max_tokens
        torch.set_num_threads(threads)
        self.tokenizer = text_only_content(AutoTokenizer.from_pretrained(model_dir))
        self.image_processor = AutoImageProcessor.from_pretrained(model_dir)
        self.model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32)
        self.model.eval()
        self.lock = threading.Lock()
        config = self.model.config
        self.image_token_id = config.image_token_id
        self.max_len = getattr(config.get_text_config(), "max_position_embeddings", 32768)
        tok = self.tokenizer
        self.end_ids = [i for i in map(tok.convert_tokens_to_ids, _END_TOKENS) if i is not None]
        self.end_ids = sorted({*self.end_ids, *self._generation_eos()})
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else self.end_ids[0]
        self.suppress = never_generated(tok, config.get_text_config().vocab_size)

    def _generation_eos(self) -> list[int]:
        eos = self.model.generation_config.eos_token_id
        return [] if eos is None else [eos] if isinstance(eos, int) else list(eos)

    def generate(
        self,
        prompt: Prompt,
        settings: GenerationSettings,
        *,
        on_text: Callable[[str], None] | None = None,
    ) -> Completion:
        """Generate one completion; serialised by ``self.lock`` (one model, one request).

        ``on_text`` (optional) gets the reply's text piece by piece as it is generated (in
        this thread); the pieces join to the completion's text. An exception it raises
        stops the generation and propagates."""
        budget = self.max_len - len(prompt.input_ids)
        if budget <= 0:
            raise RequestError(f"prompt of {len(prompt.input_ids)} tokens exceeds {self.max_len}")
        asked = settings.max_tokens
        if asked is not None and asked > budget:
            raise RequestError(
                f"max_tokens {asked} + a prompt of {len(prompt.input_ids)} tokens exceeds "
                f"the context of {self.max_len} tokens",
                param="max_tokens",
            )
        max_new = min(asked or self.default_max_tokens, budget)
        input_ids = torch.tensor([prompt.input_ids])
        mm_types = (input_ids == self.image_token_id).long()
        stops = [s for s in settings.stop if s]
        sampling = self._sampling(settings)
        skip = settings.skip_special_tokens
        pieces = None
        if on_text is not None:
            pieces = TextPieces(
                self.tokenizer, on_text, self.end_ids, stops, skip_special_tokens=skip
            )
        with self.lock, torch.inference_mode():
            torch.set_num_threads(self.threads)
            if settings.seed is not None:
                torch.manual_seed(settings.seed)
            out = self.model.generate(
                input_ids=input_ids,
                attention_mask=torch.ones_like(input_ids),
                mm_token_type_ids=mm_types,
                **prompt.vision,
                max_new_tokens=max_new,
                eos_token_id=self.end_ids,
                pad_token_id=self.pad_id,
                suppress_tokens=self.suppress or None,
                stopping_criteria=StoppingCriteriaList(
                    [_StopOnText(self.tokenizer, len(prompt.input_ids), stops)] if stops else []
                ),
                return_dict_in_generate=True,
                output_logits=settings.logprobs,
                output_scores=settings.logprobs,
                streamer=pieces,
                **sampling,
            )
        token_ids = out.sequences[0, len(prompt.input_ids) :].tolist()
        text, ended, hit = reply_text(
            self.tokenizer, token_ids, self.end_ids, stops, skip_special_tokens=skip
        )
        if pieces is not None:
            pieces.flush(text)
        finish = "stop" if ended or hit or len(token_ids) < max_new else "length"
        logprobs = None
        if settings.logprobs:
            steps = out.logits if settings.logprobs_mode == "raw" else out.scores
            logprobs = self._logprobs(token_ids, steps, settings.top_logprobs)
        return Completion(token_ids, text, finish, logprobs)

    def _sampling(self, settings: GenerationSettings) -> dict[str, Any]:
        """Sampling settings: request values over the checkpoint's generation config."""
        default = self.model.generation_config
        temperature = settings.temperature
        if temperature is None:
            temperature = default.temperature if default.do_sample else 0.0
        sampling: dict[str, Any] = {"repetition_penalty": settings.repetition_penalty}
        if temperature == 0:
            greedy = {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
            return {**sampling, **greedy}
        top_k = settings.top_k if settings.top_k is not None else default.top_k
        return {
            **sampling,
            "do_sample": True,
            "temperature": temperature,
            "top_p": settings.top_p if settings.top_p is not None else default.top_p,
            "top_k": max(top_k or 0, 0),
        }

    def _logprobs(self, token_ids: list[int], steps, top: int) -> list[dict[str, Any]]:
        entries = []
        for token, step in zip(token_ids, steps, strict=True):
            logp = torch.log_softmax(step[0].float(), dim=-1)
            entry = {
                "token": self.tokenizer.decode([token], skip_special_tokens=False),
                "logprob": max(float(logp[token]), -9999.0),
                "bytes": None,
                "top_logprobs": [],
            }
            if top:
                values, ids = logp.topk(top)
                entry["top_logprobs"] = [
                    {"token": self.tokenizer.decode([i]), "logprob": max(v, -9999.0), "bytes": None}
                    for v, i in zip(values.tolist(), ids.tolist(), strict=True)
                ]
            entries.append(entry)
        return entries


def ensure_tiny_model(seed: int = 0, cache_dir: str | Path | None = None) -> Path:
    """The tiny model's directory in the cache, (re)built there first when missing."""
    from serving.tiny_model import build_tiny_model

    root = Path(cache_dir or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    target = root / "paravt" / f"tiny-qwen3vl-seed{seed}"

    def complete(path: Path) -> bool:
        return (path / "config.json").exists() and (path / "model.safetensors").exists()

    if complete(target):
        return target
    staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    build_tiny_model(staging, seed=seed)
    if target.exists() and not complete(target):
        shutil.rmtree(target)
    try:
        staging.rename(target)  # atomic
    except OSError:  # a concurrent builder finished first
        shutil.rmtree(staging, ignore_errors=True)
        if not complete(target):
            raise
    return target
