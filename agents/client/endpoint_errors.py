"""What an endpoint failure means to a user: a hint per HTTP status, the server's own message,
the most specific connection error, and the server's Retry-After (``agents.client.llm`` and
``agents.client.retries`` use them).

Nothing here sends a request: it reads the response or exception it is given.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping
from typing import Any


def status_hint(status: int | None) -> str:
    """What to check, for a status the retries did not get past."""
    if status in (401, 403):
        return "Check api_key."
    if status == 404:
        return "Check base_url (it usually ends in /v1) and the model name (GET /v1/models)."
    if status == 429:
        return "The server is rate limiting: lower the concurrency or raise max_retries."
    if status is not None and status >= 500:
        return "The server failed while answering; check its log (out of memory? dead worker?)."
    return (
        "The server rejected the request: check the model name, context length, "
        "image format and sampling parameters."
    )


def server_message(response: Any) -> str:
    """The error text of a failed (read) response: its JSON body's message (under "error"
    as OpenAI-compatible servers put it, or at the top), else its text."""
    text = response.text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        body = text
    if isinstance(body, dict):
        body = body.get("error", body)
    if isinstance(body, dict):
        message = body.get("message") or body.get("detail") or body.get("error")
        if message:
            return str(message)
        return json.dumps(body)[:500]
    message = body if isinstance(body, str) else text
    return (message or f"HTTP {response.status_code} with an empty body")[:500]


def connection_detail(exc: Any) -> str:
    """The most specific cause in the chain, e.g. 'connection refused' rather than the
    generic 'All connection attempts failed' of httpx."""
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in chain and len(chain) < 10:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    if any(isinstance(c, ConnectionRefusedError) for c in chain):
        return "connection refused"
    with_errno = [c for c in chain if isinstance(c, OSError) and c.errno is not None]
    if with_errno:
        return str(with_errno[-1])
    return f"{type(exc).__name__}: {exc}"


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds from Retry-After-Ms / Retry-After (number or HTTP date), or None."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
