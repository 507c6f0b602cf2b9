"""The chat-model contract: sampling parameters, completions, usage, and endpoint failures.

Graph nodes, fakes, recording clients and `agents.client.llm.OpenAIChatModel` all speak it; nothing
here talks HTTP.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agents.requests import ModelRequest

TextSink = Callable[[str], None]
"""Receives each piece of generated text as it arrives."""


@dataclass(frozen=True)
class Usage:
    """Token counts as reported by the server."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    image_tokens: int | None = None
    """usage.prompt_tokens_details.image_tokens, when the server reports it."""
    cached_tokens: int | None = None
    """usage.prompt_tokens_details.cached_tokens, when the server reports it."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Completion:
    """One model answer plus everything a trace needs about how it was produced."""

    text: str
    """Generated text only (never the prefill)."""
    finish_reason: str | None
    usage: Usage
    latency_s: float
    """Wall time of the successful attempt."""
    model: str
    attempts: int
    """1 if the first try succeeded."""
    prompt_token_ids: tuple[int, ...] | None = None
    token_ids: tuple[int, ...] | None = None
    logprobs: tuple[float, ...] | None = None
    """One per generated token, when the server returned them."""

    def to_record(self) -> dict[str, Any]:
        """A JSON-serialisable dict of every field (the trace format)."""
        record = dataclasses.asdict(self)
        record["usage"]["total_tokens"] = self.usage.total_tokens
        for key in ("prompt_token_ids", "token_ids", "logprobs"):
            if record[key] is not None:
                record[key] = list(record[key])
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Completion:
        """Inverse of `to_record` (for training code reading traces back)."""
        usage = {k: v for k, v in record["usage"].items() if k != "total_tokens"}
        tuples = {
            key: tuple(record[key]) if record.get(key) is not None else None
            for key in ("prompt_token_ids", "token_ids", "logprobs")
        }
        return cls(
            text=record["text"],
            finish_reason=record["finish_reason"],
            usage=Usage(**usage),
            latency_s=record["latency_s"],
            model=record["model"],
            attempts=record["attempts"],
            **tuples,
        )


class EndpointError(RuntimeError):
    """The endpoint failed after retries, or with a non-retryable error.

    Never turned into an answer: callers count it as an infrastructure failure. `kind` is one
    of "timeout", "connection", "status", "malformed".
    """

    def __init__(
        self,
        message: str,
        *,
        base_url: str,
        status: int | None = None,
        attempts: int = 1,
        kind: str = "status",
    ) -> None:
        super().__init__(message)
        self.base_url = base_url
        self.status = status
        self.attempts = attempts
        self.kind = kind

    @property
    def resumable(self) -> bool:
        """Whether the same request can succeed when tried again: after the server was down,
        slow, overloaded or garbled, or with the key, endpoint or model set right; not when
        it refused the request itself (a 400, 413 or 422: resending changes nothing)."""
        if self.kind != "status" or self.status is None:
            return True
        return not 400 <= self.status < 500 or self.status in (401, 403, 404, 408, 409, 429)

    def __reduce__(self) -> tuple[Any, ...]:  # keep keyword fields across pickling
        kwargs = {
            "base_url": self.base_url,
            "status": self.status,
            "attempts": self.attempts,
            "kind": self.kind,
        }
        return (_rebuild_endpoint_error, (str(self), kwargs))


def _rebuild_endpoint_error(message: str, kwargs: dict[str, Any]) -> EndpointError:
    return EndpointError(message, **kwargs)


@runtime_checkable
class ChatModel(Protocol):
    """What graph nodes depend on; fakes, oracles, recording clients and training engines'
    adapters implement it too. A request (``agents.requests.ModelRequest``) says its role,
    turn, call and window; an implementation routes on ``request.role``, never on prompt text.
    ``on_text``, when given, receives the generated text as it streams (a client that cannot
    stream may call it once with the whole text)."""

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> Completion: ...


class MalformedResponse(Exception):
    """The server answered 2xx with a body that is not a usable chat completion."""


def decode_json_object(content: bytes) -> dict[str, Any]:
    """Decode a 2xx body as a JSON object, or raise MalformedResponse."""
    try:
        body = json.loads(content)
    except ValueError:
        snippet = content[:120].decode("utf-8", "replace")
        raise MalformedResponse(f"body is not JSON: {snippet!r}") from None
    if not isinstance(body, dict):
        raise MalformedResponse(f"body is JSON {type(body).__name__}, not an object")
    return body


def _check_completion(body: dict[str, Any]) -> None:
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        error = body.get("error") or body.get("message")
        extra = f"; server said {error!r}" if error else ""
        raise MalformedResponse(f"no 'choices' in the body{extra}")
    choice = choices[0]
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise MalformedResponse("choices[0] has no 'message' object")
    content = choice["message"].get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedResponse(f"message content is {type(content).__name__}, not a string")


def first_model_id(body: dict[str, Any]) -> str:
    data = body.get("data")
    if not isinstance(data, list) or not data:
        raise MalformedResponse("GET /models listed no models")
    first = data[0]
    if not isinstance(first, dict) or not isinstance(first.get("id"), str):
        raise MalformedResponse("GET /models entry has no 'id'")
    return first["id"]


def completion_from_body(body: dict[str, Any], *, model: str) -> Completion:
    """Read a checked chat.completion body; latency and attempts are filled in by the caller."""
    _check_completion(body)
    choice = body["choices"][0]
    try:
        usage = _usage(body.get("usage"))
        logprobs = _logprobs(choice.get("logprobs"))
        # vLLM: choices[].token_ids and a top-level prompt_token_ids; SGLang (0.5.23; not 0.5.15):
        # choices[].response_token_ids and choices[].prompt_token_ids (tests/data/servers/)
        token_ids = _int_tuple(_first(choice, "token_ids", "response_token_ids"))
        prompt_ids = _int_tuple(_first(body, "prompt_token_ids") or choice.get("prompt_token_ids"))
    except (TypeError, ValueError, KeyError) as exc:
        raise MalformedResponse(f"unreadable usage/logprobs/token ids: {exc!r}") from exc
    return Completion(
        text=choice["message"].get("content") or "",
        finish_reason=choice.get("finish_reason"),
        usage=usage,
        latency_s=0.0,
        model=str(body.get("model") or model),
        attempts=0,
        prompt_token_ids=prompt_ids,
        token_ids=token_ids,
        logprobs=logprobs,
    )


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    image, cached = details.get("image_tokens"), details.get("cached_tokens")
    return Usage(
        prompt_tokens=int(raw.get("prompt_tokens") or 0),
        completion_tokens=int(raw.get("completion_tokens") or 0),
        image_tokens=int(image) if image is not None else None,
        cached_tokens=int(cached) if cached is not None else None,
    )


def _logprobs(raw: Any) -> tuple[float, ...] | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), list):
        return None
    return tuple(float(entry["logprob"]) for entry in raw["content"])


def _first(container: dict[str, Any], *keys: str) -> Any:
    """The first of ``keys`` that is present and not null."""
    return next((container[k] for k in keys if container.get(k) is not None), None)


def _int_tuple(raw: Any) -> tuple[int, ...] | None:
    if raw is None:
        return None
    return tuple(int(x) for x in raw)
