"""What a video file is: its path resolved, its container opened, and its duration, frame rate,
size and codec probed, cached per file version (`agents.media.video` decodes its frames; images
and decks of pages go through `agents.media.stills`)."""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import av

from agents.media import stills
from agents.media.sampling import timestamp_text

REENCODE_HINT = "re-encode with `ffmpeg -i in.mp4 -c:v libx264 out.mp4`"
DOWNLOAD_HINT = "check the file was fully downloaded"


class VideoError(ValueError):
    """A video file cannot be used; the message says what is wrong and what to do."""


@dataclass(frozen=True)
class VideoInfo:
    """What probe() learns from a video's container and stream headers."""

    path: str
    duration: float
    fps: float
    width: int
    height: int
    codec: str


def resolve(path: str | os.PathLike) -> tuple[Path, os.stat_result]:
    """The file (or deck folder) at `path`, resolved, and its stat: one system call for a
    file seen before. Every frame a request shows comes through here, often from worker
    threads, where each extra call (``resolve`` makes one per path component) waits again
    for the GIL."""
    name = os.path.expanduser(os.fspath(path))
    try:
        st = os.stat(name)
    except (FileNotFoundError, NotADirectoryError):
        where = Path(name).resolve()
        raise VideoError(
            f"video not found: {where}; check the path and that the file exists"
        ) from None
    p = _resolved(name, st.st_dev, st.st_ino)
    if not stat.S_ISDIR(st.st_mode) and st.st_size == 0:  # a folder is a deck of page images
        raise VideoError(f"video file is empty (0 bytes): {p}; {DOWNLOAD_HINT}")
    return p, st


@lru_cache(maxsize=4096)
def _resolved(name: str, device: int, inode: int) -> Path:
    """`name` resolved, kept per file identity: a link moved to another file, or a file
    replaced under the same name, has another inode and is resolved again."""
    return Path(name).resolve()


def open_container(path: Path) -> av.container.InputContainer:
    """`path` opened for demuxing; a file FFmpeg cannot read is a VideoError."""
    try:
        return av.open(str(path), mode="r")
    except av.FFmpegError as e:
        raise VideoError(
            f"cannot read {path} as a video ({e}); {DOWNLOAD_HINT}, or {REENCODE_HINT}"
        ) from e


def video_stream(container: av.container.InputContainer, path: str | Path) -> av.VideoStream:
    """The first video stream that is not a cover picture."""
    still = av.stream.Disposition.attached_pic
    for stream in container.streams.video:
        if not stream.disposition & still:
            return stream
    raise VideoError(f"{path} has no video stream; pass a file that contains video")


def start_seconds(stream: av.VideoStream) -> float:
    """The stream's first timestamp: frame times are counted from it."""
    return float(stream.start_time * stream.time_base) if stream.start_time is not None else 0.0


def _duration_from_packets(container: av.container.InputContainer, stream: av.VideoStream) -> float:
    """Fallback when headers carry no duration: the end of the last packet, by demuxing."""
    end = None
    for packet in container.demux(stream):
        if packet.pts is not None:
            stop = packet.pts + (packet.duration or 0)
            end = stop if end is None else max(end, stop)
    return 0.0 if end is None else float(end * stream.time_base) - start_seconds(stream)


@lru_cache(maxsize=1024)
def _probe_cached(path: str, mtime_ns: int, size: int) -> VideoInfo:
    p = Path(path)
    if p.is_dir() or stills.is_image_path(p):
        return _probe_still(p)
    with open_container(p) as container:
        stream = video_stream(container, p)
        try:
            if stream.duration is not None:
                duration = float(stream.duration * stream.time_base)
            elif container.duration is not None:
                duration = container.duration / av.time_base
            else:
                duration = _duration_from_packets(container, stream)
        except av.FFmpegError as e:
            raise VideoError(f"{p} is corrupt or truncated ({e}); {REENCODE_HINT}") from e
        ctx = stream.codec_context
        rate = stream.average_rate or stream.guessed_rate or stream.base_rate
        if rate:
            fps = float(rate)
        elif stream.frames and duration > 0:
            fps = stream.frames / duration
        else:
            fps = 0.0
        info = VideoInfo(str(p), duration, fps, ctx.width, ctx.height, ctx.name)
    if not (info.duration > 0 and math.isfinite(info.duration)):
        raise VideoError(f"{p} has zero or unknown duration ({info.duration}); {REENCODE_HINT}")
    if info.width <= 0 or info.height <= 0 or info.fps <= 0:
        raise VideoError(f"{p} has no usable frame size or rate ({info}); {REENCODE_HINT}")
    return info


@dataclass(frozen=True)
class FrameTable:
    """Every frame of a video in presentation order, from its packets (nothing is decoded):
    the frame count and average rate a scanning decoder (torchcodec, decord) reports, and each
    frame's time from the stream's start, so that frame k can be asked for by time."""

    times: tuple[float, ...]
    fps: float  # frames / (end of the last frame - start of the first)

    @property
    def count(self) -> int:
        return len(self.times)


@lru_cache(maxsize=256)
def _frame_table_cached(path: str, mtime_ns: int, size: int) -> FrameTable:
    with open_container(Path(path)) as container:
        stream = video_stream(container, path)
        tb = stream.time_base
        pts, end = [], None
        try:
            for packet in container.demux(stream):
                if packet.pts is None:
                    continue
                pts.append(packet.pts)
                stop = packet.pts + (packet.duration or 0)
                end = stop if end is None else max(end, stop)
        except av.FFmpegError as e:
            raise VideoError(f"{path} is corrupt or truncated ({e}); {REENCODE_HINT}") from e
        start = start_seconds(stream)  # PyAV >= 18.1.1 refuses a closed container's stream
    if not pts:
        raise VideoError(f"{path} has no video frames; {REENCODE_HINT}")
    pts.sort()
    first = pts[0]
    span = float((end - first) * tb)
    if span <= 0:
        raise VideoError(f"{path} has frames without durations; {REENCODE_HINT}")
    times = tuple(float(p * tb) - start for p in pts)
    return FrameTable(times, len(pts) / span)


def frame_table(path: str | os.PathLike) -> FrameTable:
    """The video's frames by index (cached per file version); a still has none."""
    p, st = resolve(path)
    return _frame_table_cached(str(p), st.st_mtime_ns, st.st_size)


def _probe_still(p: Path) -> VideoInfo:
    try:
        duration, width, height, codec = stills.probe(p)
    except ValueError as exc:
        raise VideoError(str(exc)) from exc
    return VideoInfo(str(p), duration, 1.0, width, height, codec)


def is_still(info: VideoInfo) -> bool:
    """An image or a deck of pages, rather than a video."""
    return info.codec in (stills.IMAGE, stills.PAGES)


def frame_label(info: VideoInfo, t: float, region: Sequence[float] | None = None) -> str:
    """`<12.5 seconds>` for video; `<page 3>` or `<image>` for still media."""
    return stills.label(info.codec, t, region) if is_still(info) else timestamp_text(t)


_PROBED: dict[tuple[str, int, int], VideoInfo] = {}  # what `probe` answered, for `probed`


def probe(path: str | os.PathLike) -> VideoInfo:
    """Read duration, frame rate, size and codec; cached per (path, mtime, size)."""
    p, st = resolve(path)
    info = _probe_cached(str(p), st.st_mtime_ns, st.st_size)
    if len(_PROBED) >= 4096:  # a long batch over many files: start over, as a cache may
        _PROBED.clear()
    _PROBED[(str(p), st.st_mtime_ns, st.st_size)] = info
    return info


def probed(path: str | os.PathLike) -> VideoInfo | None:
    """`probe`'s answer if this process has probed this version of the file, else None: a
    ``stat``, never an open."""
    p, st = resolve(path)
    return _PROBED.get((str(p), st.st_mtime_ns, st.st_size))
