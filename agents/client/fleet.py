"""Several endpoints serving one model as one `ChatModel`: least in flight first, failover.

For fleets of vLLM or SGLang replicas without a router (``--endpoint`` given several times,
or ``PARAVT_ENDPOINT`` with commas). Each request goes to the endpoint with the fewest
requests in flight (ties: the one chosen longest ago). A request that fails there with a
transient error (a connection, a timeout, HTTP 408/429/5xx, a malformed body, after that
endpoint's own retries) is tried on another endpoint, until each has been tried once; a
request the server refused for itself (another 4xx) is not, since every replica would
refuse it alike. An endpoint that failed is rested for `REST_S` (doubling while it keeps
failing): it is chosen then only when every endpoint is resting, so that a dead replica,
which fails fast and so looks idle, does not draw the traffic.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Sequence
from typing import Any

from agents.client.completion import ChatModel, Completion, EndpointError, TextSink
from agents.client.retries import RETRYABLE_STATUS
from agents.requests import ModelRequest

log = logging.getLogger(__name__)

REST_S = 5.0
MAX_REST_S = 60.0


def transient(exc: EndpointError) -> bool:
    """Whether another replica might answer what this one failed."""
    return exc.kind != "status" or exc.status is None or exc.status in RETRYABLE_STATUS


class _Member:
    def __init__(self, model: Any) -> None:
        self.model = model
        self.base_url: str = getattr(model, "base_url", repr(model))
        self.in_flight = 0
        self.chosen = 0  # a sequence number: lower was chosen longer ago
        self.resting_until = 0.0
        self.failures = 0


class EndpointFleet:
    """A `ChatModel` over ``models`` (clients of replicas serving the same model)."""

    def __init__(self, models: Sequence[ChatModel]) -> None:
        if not models:
            raise ValueError("an endpoint fleet needs at least one endpoint")
        self.members = [_Member(m) for m in models]
        self.base_url = ", ".join(m.base_url for m in self.members)
        self._order = itertools.count(1)

    def _pick(self, tried: set[int]) -> _Member | None:
        now = time.monotonic()
        left = [m for i, m in enumerate(self.members) if i not in tried]
        if not left:
            return None
        ready = [m for m in left if m.resting_until <= now] or left
        return min(ready, key=lambda m: (m.in_flight, m.resting_until, m.chosen))

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> Completion:
        tried: set[int] = set()
        errors: list[tuple[str, EndpointError]] = []
        while True:
            member = self._pick(tried)
            if member is None:
                last = errors[-1][1]
                raise EndpointError(
                    "every endpoint failed this request: "
                    + "; ".join(f"{url}: {exc}" for url, exc in errors),
                    base_url=self.base_url,
                    kind=last.kind,
                    status=last.status,
                    attempts=sum(exc.attempts for _, exc in errors),
                )
            tried.add(self.members.index(member))
            member.chosen = next(self._order)
            member.in_flight += 1
            try:
                completion = await member.model.complete(request, on_text=on_text)
            except EndpointError as exc:
                if not transient(exc):
                    raise
                self._rest(member)
                errors.append((member.base_url, exc))
                log.warning("endpoint %s failed (%s); trying another", member.base_url, exc)
                continue
            finally:
                member.in_flight -= 1
            member.failures, member.resting_until = 0, 0.0
            return completion

    def _rest(self, member: _Member) -> None:
        member.failures += 1
        rest = min(REST_S * 2 ** (member.failures - 1), MAX_REST_S)
        member.resting_until = time.monotonic() + rest

    async def model_name(self) -> str:
        """The served model's name, as the first endpoint that answers lists it."""
        errors = []
        for member in sorted(self.members, key=lambda m: m.resting_until):
            try:
                return await member.model.model_name()
            except EndpointError as exc:
                self._rest(member)
                errors.append(exc)
        raise errors[-1]

    async def context_length(self) -> int | None:
        lengths = await asyncio.gather(*(m.model.context_length() for m in self.members))
        known = [n for n in lengths if n]
        return min(known) if known else None

    async def warm_up(self, prefill: str | None = None) -> None:
        await asyncio.gather(*(m.model.warm_up(prefill) for m in self.members))

    async def aclose(self) -> None:
        await asyncio.gather(*(m.model.aclose() for m in self.members))

    async def __aenter__(self) -> EndpointFleet:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
