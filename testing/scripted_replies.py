"""What `testing.scripted` answers: the scripted replies, and the OpenAI-shaped bodies made
from them (a chat.completion, an error), with the usage and token ids a client reads."""

from __future__ import annotations

import http
import itertools
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    """One scripted answer to a chat request."""

    text: str = ""
    """The completion text; for a non-200 status, the error message."""
    status: int = 200
    """HTTP status; anything but 200 sends an OpenAI-style error body."""
    delay_s: float | None = None
    """Seconds to wait before answering; overrides the server's latency for this reply."""
    raw_body: bytes | None = None
    """Sent verbatim instead of a JSON body (garbage-response tests); content type
    text/plain unless `headers` names one."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers, e.g. {"Retry-After": "1"}."""
    prompt_tokens: int | None = None
    """Reported usage; default: the number of whitespace words in the request's text."""
    completion_tokens: int | None = None
    """Reported usage; default: the number of whitespace words in `text`."""
    finish_reason: str = "stop"
    """Reported finish reason (e.g. "length" to imitate truncation)."""
    drop: bool = False
    """Close the connection without answering (after the delay), as a dying server does."""
    chunk_delay_s: float = 0.0
    """Stream: seconds to wait before each content chunk."""
    cut_after: int | None = None
    """Stream: close the connection after this many content chunks, before the finish."""
    before_chunk: Callable[[int], object] | None = None
    """Stream: called with each content chunk's index before it is sent (in the handler
    thread; a test can hold the stream there until its client has seen earlier chunks)."""


Responder = Callable[[dict[str, Any]], str | Reply]
"""Gets the parsed request body; returns the completion text or a Reply."""

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}
_FAKE_TOKEN_BASE = 1000


def as_responder(script: Responder | Sequence[str | Reply] | str) -> Responder:
    """Normalise the three accepted script forms into one callable."""
    if isinstance(script, str | Reply):
        fixed = script
        return lambda _request: fixed
    if callable(script):
        return script
    items = list(script)
    if not items:
        raise ValueError("a reply sequence needs at least one item")
    lock = threading.Lock()
    position = itertools.count()

    def next_item(_request: dict[str, Any]) -> str | Reply:
        with lock:
            index = next(position)
        return items[min(index, len(items) - 1)]

    return next_item


def _request_words(body: dict[str, Any]) -> int:
    """Rough prompt size: whitespace words over every text part of every message."""
    words = 0
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            words += len(content.split())
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "text":
                    words += len(str(part.get("text", "")).split())
    return words


def completion_body(request: dict[str, Any], reply: Reply, model: str) -> dict[str, Any]:
    """An OpenAI-shaped chat.completion body for `reply`, honouring logprobs/token-id flags."""
    tokens = reply.text.split()
    prompt_tokens = (
        reply.prompt_tokens if reply.prompt_tokens is not None else _request_words(request)
    )
    completion_tokens = (
        reply.completion_tokens if reply.completion_tokens is not None else len(tokens)
    )
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": reply.text},
        "finish_reason": reply.finish_reason,
        "logprobs": None,
    }
    if request.get("logprobs"):
        choice["logprobs"] = {
            "content": [
                {"token": tok, "logprob": -1.0, "bytes": list(tok.encode()), "top_logprobs": []}
                for tok in tokens
            ]
        }
    body: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model") or model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    if request.get("return_token_ids"):
        body["prompt_token_ids"] = [_FAKE_TOKEN_BASE + i for i in range(prompt_tokens)]
        choice["token_ids"] = [_FAKE_TOKEN_BASE + i for i in range(completion_tokens)]
    return body


def error_body(status: int, message: str) -> dict[str, Any]:
    if status == 429:
        kind = "rate_limit_error"
    elif status >= 500:
        kind = "server_error"
    else:
        kind = _ERROR_TYPES.get(status, "invalid_request_error")
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    return {"error": {"message": message or phrase, "type": kind, "code": status}}
