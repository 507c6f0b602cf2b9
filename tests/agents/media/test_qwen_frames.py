"""agents.media.qwen_frames against qwen-vl-utils 0.0.14's own outputs
(tests/data/parity/qwen_frames.json, recorded by tests/parity/record_qwen_frames.py with the
library itself)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents.media import qwen_frames as qf

DATA = json.loads((Path(__file__).parents[2] / "data/parity/qwen_frames.json").read_text())


def _plan(result_request, total, fps, width, height):
    req = dict(result_request)
    return qf.fetch_plan(
        total_frames=total,
        fps=fps,
        width=width,
        height=height,
        nframes=req.get("nframes"),
        sample_fps=req.get("fps"),
        min_frames=req.get("min_frames", qf.FPS_MIN_FRAMES),
        max_frames=req.get("max_frames"),
        min_pixels=req.get("min_pixels"),
        max_pixels=req.get("max_pixels"),
        start=req.get("video_start"),
        end=req.get("video_end"),
    )


@pytest.mark.parametrize("backend", ["torchcodec", "decord"])
def test_fetch_plan_equals_the_library_on_every_recorded_video(backend):
    checked = refused = 0
    for video in DATA["videos"]:
        calls = video[backend]
        whole = next(c["result"] for c in calls if "total_frames" in c["result"])
        total, fps = whole["total_frames"], whole["fps"]
        for call in calls:
            result = call["result"]
            if "error" in result:
                with pytest.raises(qf.FrameRuleError):
                    _plan(call["request"], total, fps, video["width"], video["height"])
                refused += 1
                continue
            plan = _plan(call["request"], total, fps, video["width"], video["height"])
            assert list(plan.indices) == result["indices"], (video, call["request"])
            assert plan.size == (result["width"], result["height"]), (video, call["request"])
            checked += 1
    assert checked >= 140 and refused >= 20  # the recording is not empty


def test_smart_resize_equals_the_library():
    for h, w, lo, hi, out in DATA["smart_resize"]:
        if isinstance(out, str):
            with pytest.raises(qf.FrameRuleError):
                qf.smart_resize(h, w, min_pixels=lo, max_pixels=hi)
        else:
            assert list(qf.smart_resize(h, w, min_pixels=lo, max_pixels=hi)) == out, (h, w, lo, hi)


def test_smart_nframes_equals_the_library():
    for total, fps, ele, out in DATA["smart_nframes"]:
        kwargs = {"nframes": ele.get("nframes"), "sample_fps": ele.get("fps")}
        if "min_frames" in ele:
            kwargs["min_frames"] = ele["min_frames"]
        if "max_frames" in ele:
            kwargs["max_frames"] = ele["max_frames"]
        if isinstance(out, str):
            with pytest.raises(qf.FrameRuleError):
                qf.smart_nframes(total, fps, **kwargs)
        else:
            assert qf.smart_nframes(total, fps, **kwargs) == out, (total, fps, ele)


def test_frame_range_equals_the_library():
    for total, fps, ele, out in DATA["frame_range"]:
        start, end = ele.get("video_start"), ele.get("video_end")
        if isinstance(out, str):
            with pytest.raises(qf.FrameRuleError):
                qf.frame_range(total, fps, start, end)
        else:
            first, last = qf.frame_range(total, fps, start, end)
            assert [first, last, last - first + 1] == out, (total, fps, ele)


def test_linspace_rounding_equals_torch_where_float64_does_not():
    departures = 0
    for first, last, count, departs in DATA["linspace"]:
        naive = np.rint(np.linspace(first, last, count)).astype(int).tolist()
        expected = [departs.get(str(k), v) for k, v in enumerate(naive)]
        assert list(qf.linspace_indices(first, last, count)) == expected, (first, last, count)
        departures += bool(departs)
    assert departures > 100  # the recording holds many cases plain float64 gets wrong
