"""The event loop a command runs its graph on: uvloop where it is installed, asyncio's own
otherwise (or with ``PARAVT_EVENT_LOOP=asyncio``); and whether the running loop is one.

A run is many small steps of the loop: the tasks of each graph step, each streamed token,
each checkpoint write, each socket event of the HTTP client. At K = 5 a sampling profile of
`app.py run` put about a quarter of the client's CPU in asyncio's loop and its selector.
uvloop's loop (libuv, in C) does the same per step for less; `bench/run_overhead.py` measures
the run on the loop chosen here.

A command's loop is its own: no LangGraph server watches it for blocking calls, and on a
loaded two-core machine a trip to a thread costs more than a brief call it would carry (a
cache lookup and a ``stat``; a SQLite write that never waits for a lock): the thread waits
for the GIL behind the busy loop, 1-6 ms at K = 5. `owned` tells nodes and the board that
such calls may run on the loop (`graphs.runs.offload`).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

ENV = "PARAVT_EVENT_LOOP"

_OWNED = contextvars.ContextVar("paravt_command_loop", default=False)


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop constructor; None (asyncio's default loop) when uvloop is not installed
    (it has no Windows build) or ``PARAVT_EVENT_LOOP=asyncio`` asks for asyncio's own."""
    choice = os.environ.get(ENV, "uvloop").strip().lower()
    if choice not in ("uvloop", "asyncio"):
        raise ValueError(f"{ENV}={choice!r}: use uvloop or asyncio")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to its end as `asyncio.run` does (Ctrl-C cancels it, then raises
    KeyboardInterrupt), on the loop `loop_factory` gives."""
    context = contextvars.copy_context()
    context.run(_OWNED.set, True)  # every task of the run starts from this context
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main, context=context)


def owned() -> bool:
    """Whether the running code is a command's own (`run`), not a server's or a test's."""
    return _OWNED.get()
