"""Frame sampling rules, shared by the graph, evals and training: which times, what size.

Pure arithmetic on seconds and pixels; decoding is agents.media.video's job.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence


def overview_timestamps(duration: float, n: int) -> list[float]:
    """n timestamps at the centres of n equal segments of [0, duration].

    >>> overview_timestamps(10.0, 4)
    [1.25, 3.75, 6.25, 8.75]
    """
    if n < 1 or not duration > 0:
        raise ValueError(f"need n >= 1 and duration > 0, got n={n}, duration={duration}")
    return [(i + 0.5) * duration / n for i in range(n)]


def window_timestamps(
    start: float, end: float, *, fps: float = 1.0, max_frames: int = 16
) -> list[float]:
    """Sample [start, end) at fps; above max_frames, spread max_frames uniformly; at least one.

    >>> window_timestamps(10.0, 13.0)
    [10.0, 11.0, 12.0]
    >>> window_timestamps(0.0, 100.0, max_frames=4)
    [12.5, 37.5, 62.5, 87.5]
    """
    if not (math.isfinite(start) and math.isfinite(end)) or end < start:
        raise ValueError(f"window must have finite start <= end, got [{start}, {end})")
    if fps <= 0 or max_frames < 1:
        raise ValueError(
            f"need fps > 0 and max_frames >= 1, got fps={fps}, max_frames={max_frames}"
        )
    count = max(1, math.ceil((end - start) * fps - 1e-9))
    if count <= max_frames:
        return [round(start + k / fps, 6) for k in range(count)]
    step = (end - start) / max_frames
    return [round(start + (k + 0.5) * step, 6) for k in range(max_frames)]


def between_times(times: Sequence[float], end: float, fraction: float = 0.5) -> list[float]:
    """The times `fraction` of the way from each of a window's frame times to the next (the
    window's `end` after the last): halfway by default, a second look at the window that
    sees none of the first's frames; looks at 1/3 and 2/3 see none of each other's either.

    >>> between_times([2.5, 7.5, 12.5], 15.0)
    [5.0, 10.0, 13.75]
    >>> between_times([10.0, 11.0, 12.0], 13.0)
    [10.5, 11.5, 12.5]
    >>> between_times([0.0, 3.0], 6.0, fraction=1 / 3)
    [1.0, 4.0]
    """
    if not times or end < times[-1]:
        raise ValueError(f"need frame times that end by the window's end {end}, got {times}")
    if not 0 < fraction < 1:
        raise ValueError(f"a look between frames lies strictly between them, got {fraction}")
    after = [*times[1:], end]
    return [round(a + fraction * (b - a), 6) for a, b in zip(times, after, strict=True)]


def nearest_time(sorted_times: Sequence[float], t: float) -> float:
    """The time in `sorted_times` nearest t (the earlier one on a tie).

    >>> nearest_time([0.0, 8.3, 16.7], 12.0)
    8.3
    """
    if not sorted_times:
        raise ValueError("need at least one time to choose from")
    j = bisect.bisect_left(sorted_times, t)
    if j == 0:
        return sorted_times[0]
    if j == len(sorted_times):
        return sorted_times[-1]
    before, after = sorted_times[j - 1], sorted_times[j]
    return before if t - before <= after - t else after


def fit_pixels(width: int, height: int, max_pixels: int, multiple: int = 2) -> tuple[int, int]:
    """Aspect-preserving size with w*h <= max_pixels, never upscaled, dims a multiple of `multiple`.

    >>> fit_pixels(1280, 720, 50_176)
    (298, 168)
    """
    if width < 1 or height < 1 or multiple < 1 or max_pixels < multiple * multiple:
        raise ValueError(
            f"cannot fit {width}x{height} into {max_pixels} pixels in multiples of {multiple}"
        )
    scale = min(1.0, math.sqrt(max_pixels / (width * height)))
    w = max(multiple, int(width * scale) // multiple * multiple)
    h = max(multiple, int(height * scale) // multiple * multiple)
    return w, h


def timestamp_text(t: float) -> str:
    """The absolute timestamp text placed before each frame.

    >>> timestamp_text(12.46)
    '<12.5 seconds>'
    """
    return f"<{t:.1f} seconds>"


def overview_count(codec: str, duration: float, frames: int) -> int:
    """Overview frames for the media: one for an image, at most one per page for a deck,
    else ``frames``.

    >>> [overview_count(c, d, 64) for c, d in (("image", 1.0), ("pages", 5.0), ("h264", 60))]
    [1, 5, 64]
    """
    if codec == "image":
        return 1
    if codec == "pages":
        return min(frames, int(duration))
    return frames


def overview_times(codec: str, duration: float, frames: int) -> list[float]:
    """The overview's frame times for the media: `overview_count` frames at
    `overview_timestamps`. The one place they are computed (the prepare node, the eval
    runner's subtitles and SFT export all come here, through the protocol or directly).

    >>> overview_times("h264", 10.0, 4)
    [1.25, 3.75, 6.25, 8.75]
    """
    return overview_timestamps(duration, overview_count(codec, duration, frames))


def window_plan(
    codec: str, start: float, end: float, *, fps: float, max_frames: int
) -> tuple[list[float], list[float] | None]:
    """(frame times, region) of one crop window. An image's window is a band of its height
    (one frame, region [start, end]); a deck shows one page per second whatever ``fps`` says;
    a video is sampled at ``fps``, at most ``max_frames``.

    >>> window_plan("image", 0.5, 1.0, fps=1, max_frames=16)
    ([0.0], [0.5, 1.0])
    >>> window_plan("pages", 1.0, 3.0, fps=4, max_frames=16)
    ([1.0, 2.0], None)
    """
    if codec == "image":
        return [0.0], [start, end]
    rate = 1.0 if codec == "pages" else fps
    return window_timestamps(start, end, fps=rate, max_frames=max_frames), None
