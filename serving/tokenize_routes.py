"""``POST /v1/tokenize`` and ``/v1/detokenize`` in SGLang's shape (0.5.23,
``sglang/srt/entrypoints/openai/protocol.py`` TokenizeRequest, DetokenizeRequest).

``tokenize`` takes a ``prompt`` string, or ``messages`` rendered as a chat completion would
render them (with ``add_generation_prompt``, default true), and returns ``tokens``, ``count``
and ``max_model_len``; ``detokenize`` returns ``text``. The client asks them how the served
chat template opens the assistant's turn (``agents.client.template_probe``).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict, model_validator

from serving.engine import RequestError
from serving.messages import convert_messages


class TokenizeRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    model: str | None = None
    prompt: str | None = None
    messages: list[dict[str, Any]] | None = None
    add_generation_prompt: bool | None = None
    add_special_tokens: bool = True

    @model_validator(mode="after")
    def one_input(self) -> TokenizeRequest:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("Exactly one of 'prompt' or 'messages' must be provided.")
        return self


class DetokenizeRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    model: str | None = None
    tokens: list[int]
    skip_special_tokens: bool = True


def add_tokenize_routes(app: FastAPI, vlm) -> None:
    """Serve both routes for ``vlm`` (a ``serving.engine.LocalVLM``)."""

    @app.post("/v1/tokenize")
    async def tokenize(req: TokenizeRequest) -> dict[str, Any]:
        if req.messages is not None:
            messages, images = convert_messages(req.messages)
            prompt = vlm.build_prompt(
                messages,
                images,
                add_generation_prompt=req.add_generation_prompt is not False,
            )
            tokens = prompt.input_ids
        else:
            tokens = vlm.tokenizer(req.prompt, add_special_tokens=req.add_special_tokens)[
                "input_ids"
            ]
        return {"tokens": tokens, "count": len(tokens), "max_model_len": vlm.max_len}

    @app.post("/v1/detokenize")
    async def detokenize(req: DetokenizeRequest) -> dict[str, str]:
        if any(t < 0 or t >= len(vlm.tokenizer) for t in req.tokens):
            raise RequestError("a token id is outside the vocabulary", param="tokens")
        text = vlm.tokenizer.decode(req.tokens, skip_special_tokens=req.skip_special_tokens)
        return {"text": text}
