"""Decode video frames in worker processes, for a process whose own CPU is the bottleneck.

A batch eval runs many samples at once on one event loop, and that loop's thread is what
limits it: every frame decoded in a thread of the same process takes the GIL back from the
loop each time the decoder returns to Python. In worker processes the decoding takes none of
it; only the JPEGs come back (`bench/eval_throughput.py`). The frame cache stays in the
calling process, so each frame set is still made once.

    with decode_processes(1):
        ...  # every agents.media.frame_store.encode_frames decode goes to the worker
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

from agents.media import frame_store, video

log = logging.getLogger(__name__)


def default_workers() -> int:
    """Half the cores (the other half runs the loop and the endpoint's client), 1 to 4."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


class DecodePool:
    """A process pool that runs `agents.media.video.decode_frames`; a pool broken by a dead
    worker is replaced, and a file that kills the decoder twice is a VideoError."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._lock = threading.Lock()
        self._pool = self._start()

    def _start(self) -> ProcessPoolExecutor:
        # forkserver: a fork of this process would copy its threads' locks mid-use, and
        # spawn would import the caller's main module again in every worker
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["agents.media.decode_pool"])
        return ProcessPoolExecutor(
            self.workers, mp_context=context, initializer=_exit_with, initargs=(os.getpid(),)
        )

    def decode(self, path: Any, times: tuple[float, ...], **options: Any) -> list[video.Frame]:
        pool = self._pool
        try:
            return pool.submit(video.decode_frames, path, times, **options).result()
        except BrokenProcessPool:
            pool = self._replace(pool)
        try:  # once more on a fresh pool: the worker may have died of something else
            return pool.submit(video.decode_frames, path, times, **options).result()
        except BrokenProcessPool:
            self._replace(pool)
            raise video.VideoError(
                f"decoding {path} killed the decoder process twice; the file looks corrupt: "
                f"{video.DOWNLOAD_HINT}, or {video.REENCODE_HINT}"
            ) from None

    def _replace(self, broken: ProcessPoolExecutor) -> ProcessPoolExecutor:
        """A working pool in place of `broken` (the first thread to find it broken starts it)."""
        with self._lock:
            if self._pool is broken:
                log.warning("a frame decoding process died; starting another")
                broken.shutdown(wait=False)
                self._pool = self._start()
            return self._pool

    def warm(self) -> int:
        """Start a worker now (importing the decoder takes it a moment); its process id."""
        return self._pool.submit(os.getpid).result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _exit_with(owner: int) -> None:
    """In a worker: exit once the process that started the pool is gone. Killed outright
    (``kill -9``), it cannot tell its workers, and they would wait for work forever. Ctrl-C
    is the owner's to handle (it stops the pool): a worker would print a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            try:
                os.kill(owner, 0)
            except ProcessLookupError:
                os._exit(0)
            except PermissionError:  # alive, under another user: a reused pid, or ours
                pass

    threading.Thread(target=watch, name="owner-watch", daemon=True).start()


@contextmanager
def decode_processes(workers: int | None = None) -> Iterator[DecodePool]:
    """Send every frame decode of `agents.media.frame_store.encode_frames` to worker processes."""
    pool = DecodePool(workers or default_workers())
    previous, frame_store.DECODE_POOL = frame_store.DECODE_POOL, pool
    try:
        yield pool
    finally:
        frame_store.DECODE_POOL = previous
        pool.close()
