"""Retrying an endpoint's calls: which failures are transient, how long to wait between tries,
and the one message a user reads when the tries run out (``agents.client.llm`` makes the calls).

Transient: connection errors, timeouts, HTTP 408/429/5xx, malformed bodies, a stream that
breaks off. They are retried with exponential backoff and jitter, a server's Retry-After
honoured; everything else, and whatever still fails after the retries, is `EndpointError`.

Each retry is logged (logger ``agents.client.retries``, a warning); a try that outlasts its timeout
or a slow answer is also reported as progress (logger ``agents.client.retries.waiting``: "waiting
for the endpoint ..., attempt 2 of 4, 120 s timeout"), so a command can show the wait and
keep the retry log for its verbose mode. Every message is masked by the client's
``redact`` (`agents.client.redact`): a server may echo the credentials it was sent.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agents.client.completion import EndpointError
from agents.client.endpoint_errors import status_hint

log = logging.getLogger(__name__)
waiting = logging.getLogger(f"{__name__}.waiting")

_T = TypeVar("_T")

RETRYABLE_STATUS = frozenset({408, 429}) | frozenset(range(500, 600))
START_HINT = (
    "Is the server running? Start one with "
    "`python -m sglang.launch_server --model-path <model> --port 30000` "
    "(or `python app.py serve` for the tiny local model) and check base_url."
)
STREAM_HINT = "The server dropped the stream mid-answer: check its log (did it crash or restart?)."
TIMEOUT_SETTING = "PARAVT_REQUEST_TIMEOUT"  # the setting that names `timeout` (graphs.settings)


class BrokenStream(Exception):
    """A streamed response broke off after its status (retried like a timeout or connection
    failure, as `kind` says)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


@dataclass
class Failure:
    """One failed try: its kind (timeout, connection, status, malformed) and what to tell."""

    kind: str
    detail: str
    status: int | None = None
    retry_after_s: float | None = None
    hint: str | None = None

    def summary(self) -> str:
        if self.kind == "status":
            return f"HTTP {self.status}: {self.detail}"
        if self.kind == "connection":
            return self.detail
        return f"{'timed out' if self.kind == 'timeout' else 'malformed response'}, {self.detail}"


@dataclass
class Retries:
    """The retry policy of one client. `classify` names the failure an exception is (the
    client knows its transport's exceptions); `sleep` and `rng` are injectable so tests can
    observe backoff without waiting."""

    base_url: str
    classify: Callable[[BaseException], Failure | None]  # None: not an endpoint failure
    max_retries: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)
    redact: Callable[[str], str] = str
    timeout_s: float | None = None  # each try's timeout, as progress reports name it

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")

    async def run(
        self,
        what: str,
        attempt: Callable[[], Awaitable[dict[str, Any]]],
        parse: Callable[[dict[str, Any]], _T],
        *,
        notice_after_s: float | None = None,
    ) -> tuple[_T, float, int]:
        """Run `attempt` then `parse` until success; returns (result, latency_s, attempts).
        A try still unanswered after `notice_after_s` is reported as a wait (for a request
        that should be quick, such as the model list)."""
        total = self.max_retries + 1
        for number in range(1, total + 1):
            start = time.perf_counter()
            try:
                result = parse(await self._noticed(attempt, what, number, notice_after_s))
            except Exception as exc:
                failure = self.classify(exc)
                if failure is None:
                    raise
                if failure.kind == "status" and failure.status not in RETRYABLE_STATUS:
                    raise self.error(what, failure, number) from exc
                error: BaseException = exc
            else:
                return result, time.perf_counter() - start, number
            if number == total:
                raise self.error(what, failure, number) from error
            delay = self.delay_s(number, failure.retry_after_s)
            log.warning(
                "%s from %s failed (attempt %d of %d: %s); retrying in %.2fs",
                what,
                self.base_url,
                number,
                total,
                self.redact(failure.summary()),
                delay,
            )
            if failure.kind == "timeout":
                self._waiting(what, number + 1, f"no answer within {self._timeout_text()}")
            await self.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _noticed(self, attempt, what: str, number: int, notice_after_s: float | None):
        """`attempt()`, reported as a wait if it has not answered after `notice_after_s`."""
        if notice_after_s is None:
            return await attempt()
        task = asyncio.ensure_future(attempt())
        try:
            done, _ = await asyncio.wait({task}, timeout=notice_after_s)
            if not done:
                self._waiting(what, number, f"no answer yet after {notice_after_s:g} s")
            return await task
        finally:
            if not task.done():
                task.cancel()

    def _waiting(self, what: str, number: int, why: str) -> None:
        waiting.warning(
            "waiting for the endpoint at %s (%s: %s), attempt %d of %d, %s timeout (%s sets it)",
            self.base_url,
            what,
            why,
            number,
            self.max_retries + 1,
            self._timeout_text(),
            TIMEOUT_SETTING,
        )

    def _timeout_text(self) -> str:
        return f"{self.timeout_s:g} s" if self.timeout_s is not None else "its"

    def delay_s(self, attempt: int, retry_after_s: float | None) -> float:
        """Exponential backoff with jitter in [50%, 100%]; Retry-After wins, both capped."""
        base = min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))
        delay = base * (0.5 + 0.5 * self.rng.random())
        if retry_after_s is not None:
            delay = max(delay, retry_after_s)
        return min(delay, self.max_backoff_s)

    def error(self, what: str, failure: Failure, attempts: int) -> EndpointError:
        tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        where = f"{what} from {self.base_url}"
        if failure.kind == "timeout":
            message = (
                f"{where} timed out ({failure.detail}) {tries}. Is the server overloaded or "
                f"the request too large? Raise {TIMEOUT_SETTING} (seconds per try), lower "
                "the concurrency, or check the server's log."
            )
        elif failure.kind == "connection":
            message = f"{where} failed: {failure.detail} {tries}. {failure.hint or START_HINT}"
        elif failure.kind == "malformed":
            message = (
                f"{where} returned a malformed response ({failure.detail}) {tries}. Is base_url "
                "an OpenAI-compatible server (it usually ends in /v1)? Check the server log."
            )
        else:
            message = (
                f"{where} failed with HTTP {failure.status}: {failure.detail} ({tries}). "
                f"{status_hint(failure.status)}"
            )
        return EndpointError(
            self.redact(message),
            base_url=self.base_url,
            status=failure.status,
            attempts=attempts,
            kind=failure.kind,
        )
