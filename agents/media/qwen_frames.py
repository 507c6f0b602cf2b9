"""Qwen's frame rules (qwen-vl-utils 0.0.14 ``fetch_video``): which frame indices a video or a
window gives, and the size each frame is resized to.

The ParaVT release samples every frame it sends through qwen-vl-utils, and so do Qwen-VL
servers fed a video. That library imports torchvision at module level, which cannot load
against the CPU torch these machines carry, so its rules are restated here as arithmetic on
a video's frame count and frame rate, fed by the decoder the project trusts (`agents.media.video`).
`tests/data/parity/qwen_frames.json` holds the library's own outputs over many video sizes,
durations, frame rates, windows and pixel budgets (recorded with the library itself, see
`tests/parity/record_qwen_frames.py`); `tests/agents/media/test_qwen_frames.py` holds this module
to them.

    >>> plan = fetch_plan(total_frames=600, fps=30.0, width=320, height=240, nframes=64)
    >>> len(plan.indices), plan.size
    (64, (392, 280))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PATCH_SIZE = 14  # fetch_video's default image_patch_size
MERGE_SIZE = 2
FACTOR = PATCH_SIZE * MERGE_SIZE  # frame sides are multiples of 28
FRAME_FACTOR = 2  # frame counts are even
MAX_RATIO = 200
DEFAULT_FPS = 2.0
FPS_MIN_FRAMES = 4
FPS_MAX_FRAMES = 768
VIDEO_MIN_TOKENS = 128
VIDEO_MAX_TOKENS = 768
MODEL_SEQ_LEN = 128_000  # the library's MODEL_SEQ_LEN default (an environment variable there)


class FrameRuleError(ValueError):
    """The library refuses this request (too few frames, an empty window): fetch_video raises."""


@dataclass(frozen=True)
class FramePlan:
    """What fetch_video returns for a request: frame indices, and (width, height)."""

    indices: tuple[int, ...]
    size: tuple[int, int]


def _round(number: float, factor: int) -> int:
    return round(number / factor) * factor


def _ceil(number: float, factor: int) -> int:
    return math.ceil(number / factor) * factor


def _floor(number: float, factor: int) -> int:
    return math.floor(number / factor) * factor


def smart_resize(
    height: int, width: int, *, factor: int = FACTOR, min_pixels: int, max_pixels: float
) -> tuple[int, int]:
    """(height, width): sides multiples of `factor`, area inside [min_pixels, max_pixels],
    aspect kept as closely as that allows.

    >>> smart_resize(240, 320, min_pixels=784, max_pixels=50176)
    (168, 252)
    """
    if max_pixels < min_pixels:
        raise FrameRuleError(f"max_pixels {max_pixels} is below min_pixels {min_pixels}")
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise FrameRuleError(f"aspect ratio of {width}x{height} is beyond {MAX_RATIO}")
    h_bar = max(factor, _round(height, factor))
    w_bar = max(factor, _round(width, factor))
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = _floor(height / beta, factor)
        w_bar = _floor(width / beta, factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = _ceil(height * beta, factor)
        w_bar = _ceil(width * beta, factor)
    return h_bar, w_bar


def smart_nframes(
    total_frames: int,
    fps: float,
    *,
    nframes: int | None = None,
    sample_fps: float | None = None,
    min_frames: int = FPS_MIN_FRAMES,
    max_frames: int | None = None,
) -> int:
    """How many frames to take from `total_frames` (a count, or a rate with bounds).

    >>> smart_nframes(45, 30.0, sample_fps=1, min_frames=1, max_frames=16)
    2
    """
    if nframes is not None:
        count = _round(nframes, FRAME_FACTOR)
    else:
        rate = DEFAULT_FPS if sample_fps is None else sample_fps
        low = _ceil(min_frames, FRAME_FACTOR)
        cap = min(FPS_MAX_FRAMES, total_frames) if max_frames is None else max_frames
        high = _floor(cap, FRAME_FACTOR)
        wanted = total_frames / fps * rate
        count = _floor(min(min(max(wanted, low), high), total_frames), FRAME_FACTOR)
    if not FRAME_FACTOR <= count <= total_frames:
        raise FrameRuleError(f"needs between {FRAME_FACTOR} and {total_frames} frames, got {count}")
    return count


def frame_range(
    total_frames: int, fps: float, start: float | None, end: float | None
) -> tuple[int, int]:
    """(first, last) frame index of the window [start, end] seconds, clamped to the video.

    >>> frame_range(600, 30.0, 5.0, 7.5)
    (150, 225)
    """
    if fps <= 0 or total_frames <= 0:
        raise FrameRuleError(f"no frames to take ({total_frames} frames at {fps} fps)")
    if start is None and end is None:
        return 0, total_frames - 1
    length = total_frames / fps
    first = math.ceil(max(0.0, min(start, length)) * fps) if start is not None else 0
    last = total_frames - 1
    if end is not None:
        last = min(math.floor(max(0.0, min(end, length)) * fps), total_frames - 1)
    if first >= last:
        raise FrameRuleError(
            f"empty window: frame {first} is not before frame {last} ({length:.2f} s video)"
        )
    return first, last


def linspace_indices(first: int, last: int, count: int) -> tuple[int, ...]:
    """`count` indices spread evenly over [first, last], as torch.linspace(...).round() makes
    them: a float32 step, each value one fused multiply-add from the nearer end, rounded half
    to even. Plain float64 arithmetic picks a neighbouring frame on long videos.

    >>> linspace_indices(0, 599, 4)
    (0, 200, 399, 599)
    """
    import numpy as np

    if count == 1:
        return (first,)
    start, end = np.float32(first), np.float32(last)
    step = float((end - start) / np.float32(count - 1))
    half = count // 2
    values = [
        np.float32(float(start) + step * k)
        if k < half
        else np.float32(float(end) - step * (count - k - 1))
        for k in range(count)
    ]
    return tuple(int(v) for v in np.rint(np.array(values, dtype=np.float32)))


def frame_pixels(
    count: int, *, min_pixels: int | None = None, max_pixels: int | None = None
) -> tuple[int, float]:
    """(min, max) pixels per frame for `count` frames: the caller's bounds inside the
    library's own (a token range per frame, and a share of the model's sequence length)."""
    low = VIDEO_MIN_TOKENS * FACTOR * FACTOR if min_pixels is None else min_pixels
    total = MODEL_SEQ_LEN * FACTOR * FACTOR * 0.9
    high = max(
        min(VIDEO_MAX_TOKENS * FACTOR * FACTOR, total / count * FRAME_FACTOR), int(low * 1.05)
    )
    if max_pixels is not None:
        high = min(max_pixels, high)
    return low, high


def fetch_plan(
    *,
    total_frames: int,
    fps: float,
    width: int,
    height: int,
    nframes: int | None = None,
    sample_fps: float | None = None,
    min_frames: int = FPS_MIN_FRAMES,
    max_frames: int | None = None,
    min_pixels: int | None = None,
    max_pixels: int | None = None,
    start: float | None = None,
    end: float | None = None,
) -> FramePlan:
    """The frames fetch_video takes from a video of `total_frames` at `fps` (its decoder's
    frame count and average rate), given a count (`nframes`) or a rate (`sample_fps` with
    `min_frames`/`max_frames`), an optional window and pixel bounds. FrameRuleError where the
    library raises."""
    if nframes is not None and sample_fps is not None:
        raise FrameRuleError("give a frame count or a frame rate, not both")
    first, last = frame_range(total_frames, fps, start, end)
    in_range = last - first + 1
    count = smart_nframes(
        in_range,
        fps,
        nframes=nframes,
        sample_fps=sample_fps,
        min_frames=min_frames,
        max_frames=max_frames,
    )
    indices = linspace_indices(first, last, count)
    low, high = frame_pixels(count, min_pixels=min_pixels, max_pixels=max_pixels)
    h, w = smart_resize(height, width, min_pixels=low, max_pixels=high)
    return FramePlan(indices, (w, h))
