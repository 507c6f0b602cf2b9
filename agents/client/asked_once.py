"""Ask once, share the answer: callers that ask at the same time wait on one request.

A batch starts dozens of samples at once, and each asked the server the client's
once-per-process questions (the model list, whether the template opens the think block)
before any answer was cached: 32 probes where one was needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

_T = TypeVar("_T")


class AskedOnce:
    """Answers by key. The first caller's `ask` runs; callers meanwhile await the same
    request; later callers get the kept answer. A failed request is not kept."""

    def __init__(self) -> None:
        self._known: dict[Hashable, Any] = {}  # an answer, or the request still in flight

    async def get(self, key: Hashable, ask: Callable[[], Awaitable[_T]]) -> _T:
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = asyncio.ensure_future(ask())
        elif not isinstance(known, asyncio.Future):
            return known
        try:
            answer = await asyncio.shield(known)  # a cancelled caller leaves it to the others
        except BaseException:
            if known.done() and self._known.get(key) is known:
                del self._known[key]  # the request failed: the next caller asks again
            raise
        self._known[key] = answer
        return answer

    async def cancel(self) -> None:
        """Cancel the requests still in flight and wait for them to end: the client closes
        after this, and a request left running would fail on the closed client with nobody
        to read its error (a Ctrl-C while the model list is being asked)."""
        pending = [f for f in self._known.values() if isinstance(f, asyncio.Future)]
        for future in pending:
            future.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        self._known = {k: v for k, v in self._known.items() if not isinstance(v, asyncio.Future)}
