"""Random endpoint faults around a scripted responder, for the reliability suite.

A `FaultInjector` answers a share of chat requests with one of the failures real servers
produce, and passes the rest to the responder it wraps:

- `500`: an OpenAI-style server error;
- `429`: rate limited, with a Retry-After of zero;
- `hang`: the right answer, but only after `hang_s` (longer than the client's timeout);
- `drop`: the connection is closed without an answer;
- `garbage`: HTTP 200 with a body that is not JSON.

    with ScriptedServer(FaultInjector(oracle, rate=0.2, seed=1)) as server: ...
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from testing.scripted import Reply, Responder

FAULTS = ("500", "429", "hang", "drop", "garbage")


class FaultInjector:
    """A responder that fails `rate` of the requests (seeded), the fault kinds in turn,
    counting each fault in `injected`."""

    def __init__(
        self,
        responder: Responder,
        rate: float,
        *,
        seed: int = 0,
        hang_s: float = 3.0,
        kinds: Sequence[str] = FAULTS,
    ) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault rate must be within [0, 1], got {rate}")
        unknown = set(kinds) - set(FAULTS)
        if unknown or not kinds:
            raise ValueError(f"fault kinds must be a non-empty subset of {FAULTS}, got {kinds}")
        self.responder = responder
        self.rate = rate
        self.hang_s = hang_s
        self.kinds = tuple(kinds)
        self.injected: Counter[str] = Counter()
        self.passed = 0
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> str | Reply:
        with self._lock:  # which requests fail is random; the kinds take turns
            kind = None
            if self._rng.random() < self.rate:
                kind = self.kinds[sum(self.injected.values()) % len(self.kinds)]
                self.injected[kind] += 1
            else:
                self.passed += 1
        if kind is None:
            return self.responder(request)
        if kind == "hang":
            answer = self.responder(request)
            text = answer.text if isinstance(answer, Reply) else answer
            return Reply(text=text, delay_s=self.hang_s)
        return fault_reply(kind)


def fault_reply(kind: str) -> Reply:
    """The scripted reply of one fault kind other than `hang` (which needs the real answer)."""
    if kind == "500":
        return Reply(text="injected server error", status=500)
    if kind == "429":
        return Reply(text="injected rate limit", status=429, headers={"Retry-After": "0"})
    if kind == "drop":
        return Reply(drop=True)
    if kind == "garbage":
        return Reply(raw_body=b"<html>502 Bad Gateway</html>", status=200)
    raise ValueError(f"unknown fault kind {kind!r}; choose one of {FAULTS}")
