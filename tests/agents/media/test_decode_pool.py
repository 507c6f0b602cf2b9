"""Frames decoded in worker processes: the same frames, errors as VideoError, and a dead
worker replaced without losing the decode."""

from __future__ import annotations

import os
import signal

import pytest

from agents.media import frame_store, video
from agents.media.decode_pool import decode_processes


def fail_here(*args, **kwargs):
    raise AssertionError("decoded in the calling process")


def test_the_workers_decode_the_same_frames_and_the_cache_keeps_them(
    needle_video, tmp_path, monkeypatch
):
    times = (5.0, 20.0, 41.5)
    expected = video.decode_frames(needle_video.path, times, max_pixels=4096)
    monkeypatch.setattr(frame_store, "FRAME_CACHE", frame_store.FrameCache())
    monkeypatch.setattr(video, "_decode_pyav", fail_here)  # this process must not decode
    with decode_processes(1) as decoders:
        assert decoders.warm() != os.getpid()
        frames = frame_store.encode_frames(needle_video.path, times, 4096)
        again = frame_store.encode_frames(needle_video.path, times, 4096)
    assert [f.jpeg for f in frames] == [f.jpeg for f in expected]
    assert [f.timestamp for f in frames] == [f.timestamp for f in expected]
    assert again is frames and frame_store.FRAME_CACHE.stats["made"] == 1
    assert frame_store.DECODE_POOL is None  # restored on exit


def test_a_worker_error_is_the_same_video_error(needle_video, monkeypatch):
    monkeypatch.setattr(frame_store, "FRAME_CACHE", frame_store.FrameCache())
    with decode_processes(1), pytest.raises(video.VideoError, match="outside the video"):
        frame_store.encode_frames(needle_video.path, (999.0,), 4096)


def test_a_dead_worker_is_replaced_and_the_decode_still_done(needle_video, monkeypatch, caplog):
    monkeypatch.setattr(frame_store, "FRAME_CACHE", frame_store.FrameCache())
    with decode_processes(1) as decoders:
        dead = decoders.warm()
        os.kill(dead, signal.SIGKILL)
        frames = frame_store.encode_frames(needle_video.path, (10.0,), 4096)
        assert len(frames) == 1 and frames[0].jpeg
        assert decoders.warm() != dead
    assert "a frame decoding process died" in caplog.text


def test_workers_exit_when_their_owner_is_killed_outright(tmp_path):
    """kill -9 of the process that started the pool leaves no decoder behind."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from agents.media.decode_pool import decode_processes\n"
            "import sys, time\nwith decode_processes(1) as pool:\n"
            "    print(pool.warm(), flush=True)\n    time.sleep(60)\n",
        ],
        cwd=Path(__file__).resolve().parents[3],
        stdout=subprocess.PIPE,
        text=True,
    )
    worker = int(owner.stdout.readline())
    owner.kill()
    owner.wait()
    for _ in range(100):  # the worker looks for its owner once a second
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"decoder process {worker} outlived its owner")
