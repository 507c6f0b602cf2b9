"""Decode each crop window as soon as its call is written, while the main agent still writes.

A turn that asks for K windows used to decode them only when its K sub-agents started, all
at once on two cores, so the last sub-agent's request left long after the first (fan-out at
K = 16 was 1.15x the slowest call). `WindowPrefetch` reads the turn as it streams; each
``</tool_call>`` that closes a valid call starts that window's decode in a small pool, and
the sub-agents then find their frames in the single-flight frame cache (a decode still in
flight is waited for, never repeated). With a client that does not stream, the decodes start
when the turn ends, which is no later than before.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor

from agents.media import frame_store
from agents.protocol import parse
from agents.sub_turn import Window, window_frames
from agents.tools import ToolArgumentError, validate_crop
from graphs.context import Context

log = logging.getLogger(__name__)

#: Decoding is CPU work: one worker per core, shared by every run in the process.
_POOL = ThreadPoolExecutor(max_workers=os.cpu_count() or 2, thread_name_prefix="prefetch")
_CLOSE = "</tool_call>"


class WindowPrefetch:
    """Feed it a turn's text as it arrives (`send`); it starts one decode per new call."""

    def __init__(self, path: str, codec: str, duration: float, ctx: Context) -> None:
        self.path, self.codec, self.duration, self.ctx = path, codec, duration, ctx
        self._text = ""
        self._started = 0  # calls already handed to the pool
        self._closed = 0  # "</tool_call>" seen so far

    def send(self, piece: str) -> None:
        self._text += piece
        closed = self._text.count(_CLOSE)
        if closed == self._closed:
            return
        self._closed = closed
        complete = self._text[: self._text.rfind(_CLOSE) + len(_CLOSE)]
        calls = parse(complete).tool_calls[: self.ctx.calls_per_turn]
        for call in calls[self._started :]:
            self._start(call)
        self._started = max(self._started, len(calls))

    def _start(self, call) -> None:
        try:
            window = validate_crop(call, self.duration)
        except (ToolArgumentError, ValueError):
            return  # the node refuses it in words later; nothing to decode
        ctx = self.ctx
        frames = window_frames(  # the very reference the sub-agent builds: the same cache key
            Window(self.path, self.codec, window.start, window.end, turn=0, index=0),
            fps=ctx.crop_fps,
            max_frames=ctx.crop_max_frames,
            max_pixels=ctx.crop_max_pixels,
        )
        future = _POOL.submit(frame_store.ref_frames, frames)
        future.add_done_callback(_log_failure)


def _log_failure(future) -> None:
    error = future.exception()
    if error is not None:  # the sub-agent decodes again and reports the error itself
        log.debug("prefetch of a window failed: %s", error)
