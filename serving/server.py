"""OpenAI-compatible chat-completions server for a local Qwen3-VL checkpoint on the CPU.

``transformers serve`` (5.24) cannot stand in: it loads ``AutoProcessor``, whose Qwen3-VL video
processor needs torchvision; it answers 422 to ``continue_final_message``,
``add_generation_prompt`` and ``return_token_ids``; and it ignores ``logprobs``. This small
FastAPI app serves one model, one request at a time, with what rollouts need:

- ``image_url`` parts as base64 data URLs (frames), text parts, str or list content;
- ``logprobs`` (one entry per generated token; ``logprobs_mode`` "raw" = the model's
  distribution, as vLLM's default, or "processed" = after temperature/top-k/top-p);
- vLLM's extras: ``continue_final_message`` + ``add_generation_prompt`` (prefill),
  ``return_token_ids`` (top-level ``prompt_token_ids``, per-choice ``token_ids``), ``top_k``,
  ``repetition_penalty``, ``skip_special_tokens``, ``chat_template_kwargs``;
- the raw completion text: tool calls stay in ``content`` (``agents/protocol.py`` parses them);
- ``stream`` (SSE chunks as OpenAI and SGLang send them, ``stream_options.include_usage``),
  tokens sent as they are generated; not together with ``logprobs`` or ``return_token_ids``;
- SGLang's ``/v1/tokenize`` and ``/v1/detokenize`` (``serving.tokenize_routes``).

    python -m serving.server --model DIR --host 127.0.0.1 --port 30000
    python -m serving.server            # the shipped paravt-nano (assets/paravt-nano)
    python -m serving.server --tiny     # the untrained tiny model, built into ~/.cache/paravt
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

_LAUNCHED = time.perf_counter()  # before the heavy imports: "ready" is timed from here

from fastapi import FastAPI, Request  # noqa: E402
from fastapi.exceptions import RequestValidationError  # noqa: E402
from fastapi.responses import JSONResponse, Response, StreamingResponse  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field  # noqa: E402

from serving.checkpoints import NANO_DIR, default_checkpoint  # noqa: E402
from serving.engine import (  # noqa: E402
    Completion,
    GenerationSettings,
    LocalVLM,
    Prompt,
    RequestError,
    ensure_tiny_model,
)
from serving.messages import convert_messages  # noqa: E402
from serving.regime import read_regime  # noqa: E402
from serving.sse import ChunkStream  # noqa: E402
from serving.streaming import log_done, stream_completion, usage_of  # noqa: E402
from serving.tokenize_routes import add_tokenize_routes  # noqa: E402

logger = logging.getLogger(__name__)


class ChatRequest(BaseModel):
    """The accepted body of ``POST /v1/chat/completions``; unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore")

    model: str | None = None
    messages: list[dict[str, Any]] = Field(min_length=1)
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    top_k: int | None = None
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    seed: int | None = None
    stop: str | list[str] | None = None
    logprobs: bool = False
    top_logprobs: int | None = Field(None, ge=0, le=20)
    logprobs_mode: Literal["raw", "processed"] = "raw"
    n: int = 1
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    repetition_penalty: float | None = Field(None, gt=0)
    tools: list[dict[str, Any]] | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    continue_final_message: bool = False
    add_generation_prompt: bool | None = None
    return_token_ids: bool = False
    skip_special_tokens: bool = False


def _error(status: int, message: str, kind: str, param: str | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": param, "code": status}}
    return JSONResponse(body, status_code=status)


def _check_supported(req: ChatRequest) -> None:
    if req.n != 1:
        raise RequestError("only n=1 is supported", param="n")
    if req.stream and (req.logprobs or req.return_token_ids):
        raise RequestError(
            "stream=true cannot return logprobs or token ids; send stream=false for them",
            param="stream",
        )
    for name in ("frequency_penalty", "presence_penalty"):
        if getattr(req, name):
            raise RequestError(f"{name} is not supported (use repetition_penalty)", param=name)


def generation_settings(req: ChatRequest) -> GenerationSettings:
    """The engine's settings for a chat request (``max_completion_tokens`` over ``max_tokens``)."""
    stop = [req.stop] if isinstance(req.stop, str) else req.stop or []
    return GenerationSettings(
        max_tokens=req.max_completion_tokens or req.max_tokens,
        temperature=req.temperature,
        top_p=req.top_p,
        top_k=req.top_k,
        repetition_penalty=req.repetition_penalty,
        seed=req.seed,
        stop=tuple(stop),
        logprobs=req.logprobs,
        top_logprobs=req.top_logprobs or 0,
        logprobs_mode=req.logprobs_mode,
        skip_special_tokens=req.skip_special_tokens,
    )


def create_app(
    model_dir: str | Path,
    *,
    threads: int = 1,
    served_model_name: str | None = None,
    default_max_tokens: int = 2048,
) -> FastAPI:
    """Load the checkpoint in ``model_dir`` and return the FastAPI app that serves it.

    ``threads`` is torch's CPU thread count (tiny models run fastest on one);
    ``default_max_tokens`` caps a completion whose request names no max_tokens.
    The request's ``model`` field is not checked (as in SGLang); replies name
    ``served_model_name`` (default: the directory's name).
    """
    started = time.perf_counter()
    vlm = LocalVLM(model_dir, threads=threads, default_max_tokens=default_max_tokens)
    name = served_model_name or Path(model_dir).name
    created = int(time.time())
    logger.info("loaded %s from %s in %.1fs", name, model_dir, time.perf_counter() - started)
    app = FastAPI(title="paravt local VLM server")
    app.state.vlm = vlm

    @app.exception_handler(RequestError)
    async def api_error(_: Request, exc: RequestError) -> JSONResponse:
        return _error(400, exc.message, "invalid_request_error", exc.param)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            "body is not valid JSON"
            if e["type"] == "json_invalid"
            else f"{'.'.join(str(p) for p in e['loc'][1:]) or 'body'}: {e['msg']}"
            for e in exc.errors()
        ]
        return _error(400, "; ".join(problems), "invalid_request_error")

    @app.exception_handler(Exception)
    async def internal(_: Request, exc: Exception) -> JSONResponse:
        # Starlette re-raises after this handler, so uvicorn logs the traceback server-side.
        return _error(500, f"internal error: {type(exc).__name__}: {exc}", "internal_error")

    add_tokenize_routes(app, vlm)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok", "model": name}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        card = {"id": name, "object": "model", "created": created, "owned_by": "paravt"}
        entry = {**card, "root": str(model_dir), "max_model_len": vlm.max_len}  # as in SGLang
        regime = read_regime(model_dir)
        if regime is not None:  # what the checkpoint was trained for (graphs.regime reads it)
            entry["regime"] = regime.to_dict()
        return {"object": "list", "data": [entry]}

    def prompt_of(req: ChatRequest) -> Prompt:
        messages, images = convert_messages(req.messages)
        return vlm.build_prompt(
            messages,
            images,
            tools=req.tools,
            chat_template_kwargs=req.chat_template_kwargs,
            continue_final_message=req.continue_final_message,
            add_generation_prompt=req.add_generation_prompt,
        )

    @app.post("/v1/chat/completions")
    async def chat(req: ChatRequest) -> Response:
        _check_supported(req)
        if req.stream:
            return await stream(req)
        began = time.perf_counter()

        def work() -> tuple[Prompt, Completion]:
            prompt = prompt_of(req)
            return prompt, vlm.generate(prompt, generation_settings(req))

        prompt, done = await asyncio.to_thread(work)
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": done.text},
            "finish_reason": done.finish_reason,
            "logprobs": {"content": done.logprobs} if done.logprobs is not None else None,
        }
        body: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": name,
            "choices": [choice],
            "usage": usage_of(prompt, done),
        }
        if req.return_token_ids:
            body["prompt_token_ids"] = prompt.input_ids
            choice["token_ids"] = done.token_ids
        log_done(prompt, done, began)
        return JSONResponse(body)

    async def stream(req: ChatRequest) -> StreamingResponse:
        def generate(on_text: Callable[[str], None]) -> tuple[Prompt, Completion]:
            prompt = prompt_of(req)
            return prompt, vlm.generate(prompt, generation_settings(req), on_text=on_text)

        include_usage = bool((req.stream_options or {}).get("include_usage"))
        return await stream_completion(generate, ChunkStream(name, include_usage=include_usage))

    return app


def main(argv: list[str] | None = None) -> int:
    """CLI: ``python -m serving.server [--model DIR | --tiny] --host 127.0.0.1 --port 30000``.

    Serves until interrupted; returns 0, or uvicorn's ``STARTUP_FAILURE`` (3) if it never served.
    """
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", type=Path, help=f"HF checkpoint dir (default: paravt-nano, {NANO_DIR})"
    )
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="Serve the untrained tiny model (the fallback when paravt-nano is missing)",
    )
    parser.add_argument("--seed", type=int, default=0, help="Seed of the tiny model")
    parser.add_argument("--cache-dir", type=Path, help="Cache root (default: ~/.cache)")
    parser.add_argument("--host", default="127.0.0.1", help="Listen address")
    parser.add_argument("--port", type=int, default=30000, help="Listen port")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--served-model-name", help="Model id to report (default: dir name)")
    parser.add_argument(
        "--default-max-tokens", type=int, default=2048, help="Completion cap without max_tokens"
    )
    parser.add_argument("--log-level", default="info", help="Logging level")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    model_dir = args.model or (None if args.tiny else default_checkpoint())
    if model_dir is None:
        if not args.tiny:
            logger.warning(
                "the paravt-nano checkpoint is missing (no model.safetensors and config.json "
                "in %s): serving the untrained tiny model instead",
                NANO_DIR,
            )
        model_dir = ensure_tiny_model(args.seed, args.cache_dir)
        logger.info("using the tiny model at %s", model_dir)
    app = create_app(
        model_dir,
        threads=args.threads,
        served_model_name=args.served_model_name,
        default_max_tokens=args.default_max_tokens,
    )
    url = f"http://{args.host}:{args.port}/v1"

    class Server(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets=sockets)
            if not self.should_exit:
                took = time.perf_counter() - _LAUNCHED
                logger.info("ready: serving %s at %s (%.1fs after launch)", model_dir, url, took)

    config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level.lower())
    server = Server(config)
    server.run()
    return 0 if server.started else STARTUP_FAILURE


if __name__ == "__main__":
    sys.exit(main())
