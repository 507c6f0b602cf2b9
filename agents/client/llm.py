"""Chat-model client: the one place that talks to an OpenAI-compatible endpoint.

Graph nodes depend on the `ChatModel` protocol; `OpenAIChatModel` implements it over HTTP
(SGLang in production, vLLM or any OpenAI-compatible server elsewhere). `base_url`, `api_key`
and the HTTP client are injectable, so a training engine's proxy can stand in for the server.

Transient failures (connection errors, timeouts, HTTP 408/429/5xx, malformed bodies, a
stream that breaks off) are retried with exponential backoff and jitter (`agents.client.retries`);
everything else, and whatever still fails after the retries, raises `EndpointError`. An
infrastructure failure is never turned into an answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx
import httpx2

from agents.client.asked_once import AskedOnce
from agents.client.chunks import StreamState, read_chunks
from agents.client.completion import (
    ChatModel,
    Completion,
    EndpointError,
    MalformedResponse,
    TextSink,
    Usage,
    completion_from_body,
    decode_json_object,
    first_model_id,
)
from agents.client.endpoint_errors import connection_detail, retry_after_s, server_message
from agents.client.redact import Redactor, redact_url, url_secrets, without_userinfo
from agents.client.retries import STREAM_HINT, BrokenStream, Failure, Retries
from agents.client.template_probe import template_opens
from agents.client.transport import REQUEST_ERRORS, TIMEOUTS, StatusError, Transport
from agents.client.wire_json import body_bytes
from agents.requests import ModelRequest, SamplingParams

log = logging.getLogger(__name__)

__all__ = [
    "ChatModel",
    "Completion",
    "EndpointError",
    "OpenAIChatModel",
    "SamplingParams",
    "Usage",
]

DEFAULT_BASE_URL = "http://127.0.0.1:30000/v1"
#: A model list still unanswered after this long is reported as a wait (it should be quick).
NOTICE_AFTER_S = 10.0


def _listed(body: dict[str, Any]) -> dict[str, Any]:
    first_model_id(body)  # a list with no model is malformed (and retried)
    return body


class OpenAIChatModel:
    """`ChatModel` over an OpenAI-compatible HTTP endpoint, with its own retry loop.

    `sleep` and `rng` are injectable so tests can observe backoff without waiting.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        api_key: str = "EMPTY",
        model: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 8.0,
        http_client: httpx2.AsyncClient | httpx.AsyncClient | None = None,
        extra_body: Mapping[str, Any] | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        # the URL requests go to carries no credentials; the one shown has them masked
        self.base_url = without_userinfo(base_url.rstrip("/"))[0]
        self.shown_url = redact_url(base_url.rstrip("/"))
        self._http = Transport(base_url, api_key=api_key, timeout=timeout, http_client=http_client)
        self.redact = Redactor([api_key, *url_secrets(base_url), *self._http.credentials])
        self.timeout = timeout
        self._retries = Retries(
            self.shown_url,
            self._classify,
            max_retries,
            backoff_s,
            max_backoff_s,
            sleep,
            rng or random.Random(),
            redact=self.redact,
            timeout_s=timeout,
        )
        self.extra_body: dict[str, Any] = dict(extra_body or {})
        self._model = model
        self._asked = AskedOnce()  # the model list, template probes: one request each

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> Completion:
        """Send one request (its frames decoded off the event loop); retried as above.

        With ``on_text``, and neither logprobs nor token ids asked for, the request streams
        (``stream: true`` with usage): ``on_text`` gets each content delta as the server sends
        it, and the `Completion` is the one the unstreamed request would give. A stream that
        breaks off is retried from the start, so ``on_text`` then receives the new attempt's
        text after what the broken one sent. Otherwise (or if the server answers one JSON body
        anyway) ``on_text`` gets the whole text once."""
        model = await self.model_name()
        sent = request.wire() if request.ready else await asyncio.to_thread(request.wire)
        params = request.params
        extra_body = dict(self.extra_body)
        if request.prefill is not None and not await self._template_opens(request.prefill):
            sent.append({"role": "assistant", "content": request.prefill})
            extra_body.update(continue_final_message=True, add_generation_prompt=False)
        if params.return_token_ids:
            extra_body["return_token_ids"] = True
        body: dict[str, Any] = {
            "model": model,
            "messages": sent,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
        }
        if params.seed is not None:
            body["seed"] = params.seed
        if params.stop:
            body["stop"] = list(params.stop)
        if params.logprobs:
            body["logprobs"] = True
        body.update(extra_body)
        headers = request.headers()
        streams = on_text is not None and not (params.return_token_ids or params.logprobs)
        whole_body = not streams  # True once an answer came as one JSON body

        async def attempt() -> dict[str, Any]:
            # the body goes as bytes (agents.client.wire_json), its frames' JSON made once
            raw = await self._http.send(
                "POST", "/chat/completions", content=body_bytes(body), headers=headers
            )
            return decode_json_object(raw.content)

        async def attempt_stream() -> dict[str, Any]:
            nonlocal whole_body
            assert on_text is not None
            streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
            raw = await self._http.send(
                "POST",
                "/chat/completions",
                content=body_bytes(streamed),
                headers=headers,
                stream=True,
            )
            state = StreamState()
            try:
                whole_body = not raw.headers.get("content-type", "").startswith("text/event-stream")
                if whole_body:  # the server ignored "stream"
                    return decode_json_object(await raw.aread())
                return await read_chunks(raw.aiter_lines(), on_text, state)
            except TIMEOUTS as exc:
                detail = f"the stream stalled for {self.timeout:g}s after {state.events} events"
                raise BrokenStream("timeout", detail) from exc
            except REQUEST_ERRORS as exc:
                detail = (
                    f"the stream broke off after {state.events} events "
                    f"({type(exc).__name__}: {exc})"
                )
                raise BrokenStream("connection", detail) from exc
            finally:
                await raw.aclose()

        def parse(body: dict[str, Any]) -> Completion:
            return completion_from_body(body, model=model)

        completion, latency_s, attempts = await self._retries.run(
            "chat completion stream" if streams else "chat completion",
            attempt_stream if streams else attempt,
            parse,
        )
        if on_text is not None and whole_body and completion.text:
            on_text(completion.text)
        return dataclasses.replace(completion, latency_s=latency_s, attempts=attempts)

    def _classify(self, exc: BaseException) -> Failure | None:
        """The endpoint failure an exception of a try is, for the retry policy; None for any
        other error (raised as it is)."""
        if isinstance(exc, TIMEOUTS):  # before REQUEST_ERRORS, their base
            return Failure("timeout", f"no answer within {self.timeout:g}s")
        if isinstance(exc, REQUEST_ERRORS):
            return Failure("connection", connection_detail(exc))
        if isinstance(exc, StatusError):
            return Failure(
                "status",
                server_message(exc.response),
                status=exc.status_code,
                retry_after_s=retry_after_s(exc.response.headers),
            )
        if isinstance(exc, MalformedResponse):
            return Failure("malformed", str(exc))
        if isinstance(exc, BrokenStream):
            return Failure(exc.kind, str(exc), hint=STREAM_HINT)
        return None

    async def _template_opens(self, prefill: str) -> bool:
        """Whether the served template's generation prompt already ends with ``prefill``
        (a Thinking checkpoint's ``<think>\n``): then it is not sent again. Asked once."""

        async def ask() -> bool:
            opens = await template_opens(
                self._post_json, self.base_url, await self.model_name(), prefill
            )
            if opens:
                log.info("the served chat template opens %r itself: not prefilled", prefill)
            return opens

        return await self._asked.get(("template opens", prefill), ask)

    async def _post_json(self, url: str, body: dict[str, Any]) -> Any:
        """One POST through this client (no retries); the decoded JSON body."""
        raw = await self._http.send("POST", url, content=json.dumps(body).encode())
        return raw.json()

    async def model_name(self) -> str:
        """`model` if given, else the first id served at GET /models (cached)."""
        if self._model is None:
            self._model = first_model_id(await self._model_list())
        return self._model

    async def served_entry(self) -> dict[str, Any]:
        """The served model's entry in GET /models (its ``max_model_len``, and a
        ``regime`` where the server records one); retried, raises EndpointError."""
        body, name = await self._model_list(), await self.model_name()
        entries = [e for e in body.get("data") or [] if isinstance(e, dict)]
        return next((e for e in entries if e.get("id") == name), entries[0] if entries else {})

    async def context_length(self) -> int | None:
        """The served model's context window: ``max_model_len`` of its GET /models entry, as
        SGLang and vLLM list it; None when the server lists none or does not answer (the
        next completion then reports the endpoint)."""
        try:
            entry = await self.served_entry()
        except EndpointError:
            return None
        length = entry.get("max_model_len")
        return length if isinstance(length, int) and length > 0 else None

    async def warm_up(self, prefill: str | None = None) -> None:
        """Ask now what the client asks once (the model list; whether the template opens
        `prefill`), so that the first turn does not wait on it. One attempt, never raising:
        on a failure the first completion asks again, retried, and reports the endpoint."""

        async def once() -> dict[str, Any]:
            return _listed(await self._fetch_model_list())

        try:
            await self._asked.get("model list", once)  # a failure is not kept
        except Exception as exc:  # the run's first request reports it
            log.debug("warm-up: no model list from %s: %s", self.shown_url, self.redact(str(exc)))
            return
        if prefill is not None:
            await self._template_opens(prefill)

    async def _fetch_model_list(self) -> dict[str, Any]:
        raw = await self._http.send("GET", "/models")
        return decode_json_object(raw.content)

    async def _model_list(self) -> dict[str, Any]:
        """GET /models, fetched once (retried as completions are)."""

        async def ask() -> dict[str, Any]:
            body, _, _ = await self._retries.run(
                "model list", self._fetch_model_list, _listed, notice_after_s=NOTICE_AFTER_S
            )
            return body

        return await self._asked.get("model list", ask)

    async def aclose(self) -> None:
        """End the requests asked once that are still in flight, then close the HTTP client,
        unless it was injected (then its owner closes it)."""
        await self._asked.cancel()
        await self._http.aclose()

    async def __aenter__(self) -> OpenAIChatModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
