"""Brief calls a node would send to a thread, run on the loop when it is a command's own.

On a server's loop (a LangGraph server flags blocking calls) and in tests every call here
goes to a thread, as before. On a command's loop (`graphs.runs.event_loop.owned`) a call that
cannot wait runs in place: a video probed before is probed again there, a request whose
frames are all in memory is prepared there, and a board call that can take its locks at once
is made there. Anything that would decode video or wait for another process's lock still
goes to a thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from agents.media import video
from agents.requests import ModelRequest
from graphs.runs import event_loop
from graphs.store.board import BoardStore

_T = TypeVar("_T")


async def prepare_request(request: ModelRequest) -> None:
    """Build what ``request`` sends, its frames decoded and encoded (`ModelRequest.prepare`)."""
    if event_loop.owned() and request.prepare(cached_only=True):
        return
    await asyncio.to_thread(request.prepare)


async def probe(path: str) -> video.VideoInfo:
    """`video.probe(path)`: in place if this process has probed the file, else in a thread."""
    info = video.probed(path) if event_loop.owned() else None
    return info if info is not None else await asyncio.to_thread(video.probe, path)


async def files_call(function: Callable[..., _T], /, *args: Any) -> _T:
    """``function(*args)``, which looks at files (resolves a path, follows a symlink): in
    place on a command's loop, else in a thread (a LangGraph server flags such calls)."""
    if event_loop.owned():
        return function(*args)
    return await asyncio.to_thread(function, *args)


def prepare_if_cached(request: ModelRequest) -> None:
    """Prepare ``request`` in place if that decodes nothing, on a command's own loop; else
    leave it to the client (which may never need the frames: a scripted or in-process model)."""
    if event_loop.owned():
        request.prepare(cached_only=True)


async def board_call(
    board: BoardStore, method: Callable[..., _T], /, *args: Any, **kwargs: Any
) -> _T:
    """``method(*args, **kwargs)``, a call of ``board`` (`at_once`, else a thread)."""
    if event_loop.owned():
        done, value = board.at_once(method, *args, **kwargs)
        if done:
            return value  # type: ignore[return-value]
    return await asyncio.to_thread(method, *args, **kwargs)
