"""Whatever process runs the graph (the CLI, a LangGraph server), the board says how a run ended.

Every node is wrapped (and given the graph's default settings when a run sends none): an
error inside it ends the run ``failed`` on the board, with the partial trace when the node
holds the run's state, and a cancellation ends it ``interrupted``; the error then goes on as
before (the server reports it, the CLI handles it). A process killed outright is caught
when the board is opened next (``Board.mark_stale_interrupted``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.runtime import Runtime

from graphs.context import Context, effective
from graphs.runs.traces import end_run
from graphs.store.board import BoardStore
from graphs.store.errors import full_disk
from graphs.store.postgres.url import DatabaseError

log = logging.getLogger(__name__)


def guarded(
    node: Callable[..., Awaitable[Any]], board: BoardStore, defaults: Context
) -> Callable[..., Awaitable[Any]]:
    """``node`` recording how a run ended, and given ``defaults`` as its context when the run
    was started without one (a direct ``invoke``; servers build the schema's defaults)."""

    @functools.wraps(node)  # LangGraph reads the signature to inject config and runtime
    async def run(payload, *args, **kwargs):
        if isinstance(kwargs.get("runtime"), Runtime) and kwargs["runtime"].context is None:
            kwargs["runtime"] = kwargs["runtime"].override(context=defaults)
        try:
            return await node(payload, *args, **kwargs)
        except asyncio.CancelledError:
            await _end(board, payload, args, kwargs, "interrupted", "cancelled before it finished")
            raise
        except Exception as exc:
            await _end(board, payload, args, kwargs, "failed", f"{type(exc).__name__}: {exc}")
            raise

    return run


async def _end(board: BoardStore, payload, args, kwargs, status: str, error: str) -> None:
    run_id = payload.get("run_id") if isinstance(payload, dict) else None
    try:
        await _record(board, run_id, payload, args, kwargs, status, error)
    except DatabaseError as exc:  # the database is gone: the run's own error says the rest
        log.info("could not record run %s as %s: %s", run_id, status, exc)


async def _record(board, run_id, payload, args, kwargs, status: str, error: str) -> None:
    # off the event loop: a LangGraph server refuses blocking calls inside a run
    if not run_id or await asyncio.to_thread(board.run, run_id) is None:
        return
    runtime = next((a for a in (*args, *kwargs.values()) if isinstance(a, Runtime)), None)
    ctx = effective(runtime.context) if runtime and runtime.context else Context()
    try:
        if "messages" in payload and status == "failed":  # the run's state: keep its trace
            await end_run(board, run_id, payload, ctx, thread_id=run_id, status=status, error=error)
        else:
            await asyncio.to_thread(board.release_run, run_id, status=status, error=error)
    except DatabaseError:
        raise
    except Exception as exc:  # the board must not hide the run's own error
        if full_disk(exc):  # the run's own error says so, once
            log.info("could not record run %s as %s: the disk is full", run_id, status)
        else:
            log.exception("could not record run %s as %s", run_id, status)
