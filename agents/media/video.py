"""Timestamped JPEG frames and the sampling rules that pick their times: the module that
decodes video (`agents.media.video_probe` says what a file is; `agents.media.frame_store`
keeps the encoded sets a prompt sends)."""

from __future__ import annotations

import asyncio
import bisect
import logging
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import av

from agents.media import stills
from agents.media.frame_encoding import ENCODINGS, Encoder, encode_bgr
from agents.media.sampling import fit_pixels, nearest_time

# Re-exported: callers probe, sample and decode through one module.
from agents.media.sampling import overview_timestamps as overview_timestamps
from agents.media.sampling import timestamp_text as timestamp_text
from agents.media.sampling import window_timestamps as window_timestamps
from agents.media.video_probe import DOWNLOAD_HINT as DOWNLOAD_HINT
from agents.media.video_probe import REENCODE_HINT as REENCODE_HINT
from agents.media.video_probe import VideoError as VideoError
from agents.media.video_probe import VideoInfo as VideoInfo
from agents.media.video_probe import frame_label as frame_label
from agents.media.video_probe import is_still as is_still
from agents.media.video_probe import open_container, probe, start_seconds, video_stream
from agents.media.video_probe import probed as probed
from agents.media.video_probe import resolve as resolve

log = logging.getLogger(__name__)

BACKENDS = ("pyav", "decord")
SAMPLINGS = ("exact", "keyframe")  # the frame nearest each time, or the keyframe nearest it
THREAD_TYPE = "AUTO"  # frame threads: lower latency for a little more CPU (bench/README.md)
DECODE_THREADS = min(4, os.cpu_count() or 1)  # bounds frames in flight, so memory, per decode
# Frame threads are 1.1-1.7x faster from 640x360 up and about even at 320x240, where a
# fan-out's windows still finish sooner with them; on 128x96 frames they are slower and cost
# 50-90% more CPU, paid on every sample of a batch eval (bench/decode_threads.py).
THREADED_MIN_PIXELS = 320 * 240
SEEK_GAP = 2.0  # seconds; without a keyframe index, seek for targets further ahead than this
SKIP_MARGIN = 1.0  # seconds; non-reference frames further than this before a target are skipped


@dataclass(frozen=True)
class Frame:
    """One decoded, resized, JPEG-encoded frame and the time it was taken at."""

    timestamp: float  # seconds from the start of the video of the frame actually decoded
    requested: float
    width: int
    height: int
    jpeg: bytes = field(repr=False)


def _check_times(info: VideoInfo, timestamps: Sequence[float]) -> list[float]:
    times = [float(t) for t in timestamps]
    bad = [t for t in times if not (0.0 <= t <= info.duration + 1e-6)]
    if bad:
        window = f"{min(times):.3f}-{max(times):.3f} s"
        raise VideoError(
            f"requested window {window} has {len(bad)} time(s) outside the video, which "
            f"lasts 0-{info.duration:.3f} s ({info.path}); request times inside the duration"
        )
    return times


def _keyframe_times(stream: av.VideoStream, start: float) -> list[float]:
    """Keyframe times (seconds, decode order) from the container index; empty when there is none."""
    entries = getattr(stream, "index_entries", None) or ()
    tb = stream.time_base
    return [float(e.timestamp * tb) - start for e in entries if e.is_keyframe]


def _should_seek(keyframes: list[float], pos: float | None, target: float) -> bool:
    """Seek when a keyframe lies between the decoder's position and the target."""
    pos = 0.0 if pos is None else pos
    if not keyframes:
        return target - pos > SEEK_GAP
    j = bisect.bisect_right(keyframes, target) - 1
    return j >= 0 and keyframes[j] > pos + 1e-6


def _frames(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    skip_before: Callable[[], float],
) -> Iterator[av.VideoFrame]:
    """Decode forward, never decoding non-reference frames that start before skip_before()."""
    ctx, tb, skipping = stream.codec_context, float(stream.time_base), False
    for packet in container.demux(stream):  # ends with an empty packet that flushes the decoder
        far = packet.pts is not None and packet.pts * tb < skip_before()
        if far != skipping:
            ctx.skip_frame, skipping = ("NONREF" if far else "DEFAULT"), far
        yield from packet.decode()


def decoder_threads(info: VideoInfo) -> tuple[str, int]:
    """(thread type, thread count) for decoding this video's frames."""
    if info.width * info.height >= THREADED_MIN_PIXELS:
        return THREAD_TYPE, DECODE_THREADS
    return "SLICE", 1


def _nearest_frames(
    container: av.container.InputContainer, info: VideoInfo, targets: list[float]
) -> Iterator[tuple[float, av.VideoFrame, float]]:
    """Yield (target, frame, frame time) for the frame nearest each of the sorted targets."""
    stream = video_stream(container, info.path)
    stream.thread_type, stream.codec_context.thread_count = decoder_threads(info)
    start = start_seconds(stream)
    keyframes = _keyframe_times(stream, start)
    margin = max(SKIP_MARGIN, 3.0 / info.fps)
    pending = deque(targets)
    sought = 0  # len(pending) at the last seek: that target is never sought twice
    prev, prev_t = None, None
    while pending:
        if sought != len(pending) and _should_seek(keyframes, prev_t, pending[0]):
            offset = (pending[0] - 1.0 / info.fps + start) / stream.time_base
            container.seek(max(0, int(offset)), stream=stream, backward=True)
            prev, prev_t, sought = None, None, len(pending)
        for frame in _frames(container, stream, lambda: pending[0] + start - margin):
            if frame.time is None:
                raise VideoError(f"{info.path} has frames without timestamps; {REENCODE_HINT}")
            ft = frame.time - start
            while pending and ft >= pending[0]:
                t = pending.popleft()
                closer_prev = prev is not None and t - prev_t < ft - t
                yield (t, prev, prev_t) if closer_prev else (t, frame, ft)
            prev, prev_t = frame, ft
            if not pending or (sought != len(pending) and _should_seek(keyframes, ft, pending[0])):
                break
        else:  # end of stream: targets in the last frame interval clamp to the last frame
            if prev is None or targets[-1] - prev_t > max(1.0, 2.0 / info.fps):
                stopped = "before any frame" if prev_t is None else f"at {prev_t:.3f} s"
                raise VideoError(
                    f"decoding {info.path} stopped {stopped}, before the requested "
                    f"{targets[-1]:.3f} s (duration {info.duration:.3f} s); the file looks "
                    f"truncated: {DOWNLOAD_HINT}, or {REENCODE_HINT}"
                )
            for t in pending:
                yield t, prev, prev_t
            return


def _decode_pyav(
    info: VideoInfo, times: list[float], encoder: Encoder
) -> dict[float, tuple[float, bytes]]:
    """Map each distinct requested time to (frame time, JPEG) of the nearest decoded frame."""
    out: dict[float, tuple[float, bytes]] = {}
    last: tuple[float, bytes] | None = None  # consecutive targets often share a frame
    with open_container(Path(info.path)) as container:
        try:
            for t, frame, ft in _nearest_frames(container, info, sorted(set(times))):
                if last is None or last[0] != ft:
                    last = (ft, encoder.frame(frame))
                out[t] = last
        except av.FFmpegError as e:
            raise VideoError(
                f"{info.path} is corrupt or truncated ({e}); {DOWNLOAD_HINT}, or {REENCODE_HINT}"
            ) from e
    return out


def _decode_decord(
    info: VideoInfo, times: list[float], encoder: Encoder
) -> dict[float, tuple[float, bytes]]:
    """Same contract as _decode_pyav, through decord's frame index (nearest frame by time)."""
    try:
        import decord
    except ImportError as e:
        raise ImportError(
            "backend='decord' needs the decord package: pip install paravt-graph[decord]"
        ) from e
    reader = decord.VideoReader(info.path, ctx=decord.cpu(0))
    starts = reader.get_frame_timestamp(range(len(reader)))[:, 0].tolist()
    out: dict[float, tuple[float, bytes]] = {}
    for t in sorted(set(times)):
        j = bisect.bisect_left(starts, t)
        if j == len(starts) or (j > 0 and t - starts[j - 1] < starts[j] - t):
            j -= 1
        out[t] = (float(starts[j]), encoder.rgb(reader[j].asnumpy()))
    return out


@lru_cache(maxsize=256)
def _keyframes_cached(path: str, mtime_ns: int, size: int) -> tuple[float, ...]:
    with open_container(Path(path)) as container:
        stream = video_stream(container, path)
        start, tb = start_seconds(stream), stream.time_base
        try:  # packet headers only: demuxing reads no pixels and decodes nothing
            times = {
                float(packet.pts * tb) - start
                for packet in container.demux(stream)
                if packet.is_keyframe and packet.pts is not None
            }
        except av.FFmpegError as e:
            raise VideoError(f"{path} is corrupt or truncated ({e}); {REENCODE_HINT}") from e
    if not times:
        raise VideoError(f"{path} has no keyframes; {REENCODE_HINT}")
    return tuple(sorted(times))


def keyframe_times(path: str | os.PathLike) -> tuple[float, ...]:
    """Presentation times (s) of every keyframe, from the packets; cached per file version."""
    p, st = resolve(path)
    return _keyframes_cached(str(p), st.st_mtime_ns, st.st_size)


def snap_to_keyframes(path: str | os.PathLike, timestamps: Sequence[float]) -> list[float]:
    """The keyframe time nearest each timestamp (the earlier one on a tie)."""
    keys = keyframe_times(path)
    return [nearest_time(keys, float(t)) for t in timestamps]


def _decode_keyframes(
    info: VideoInfo, times: list[float], encoder: Encoder
) -> dict[float, tuple[float, bytes]]:
    """Map each time to (keyframe time, JPEG) of its nearest keyframe, decoding that frame
    alone: a seek to it, its one packet, and a drain."""
    keys = keyframe_times(info.path)
    wanted = {t: nearest_time(keys, t) for t in set(times)}
    decoded: dict[float, tuple[float, bytes]] = {}
    with open_container(Path(info.path)) as container:
        stream = video_stream(container, info.path)
        ctx, tb, start = stream.codec_context, stream.time_base, start_seconds(stream)
        ctx.thread_type, ctx.thread_count = "SLICE", 1  # one frame: nothing to overlap
        for key in sorted(set(wanted.values())):
            try:
                container.seek(round((key + start) / tb), stream=stream, backward=True)
                packets = container.demux(stream)
                packet = next(p for p in packets if p.is_keyframe and p.pts is not None)
                frame = [*packet.decode(), *ctx.decode(None)][0]
                ctx.flush_buffers()
            except (av.FFmpegError, StopIteration, IndexError) as e:
                raise VideoError(
                    f"{info.path}: cannot decode its keyframe at {key:.3f} s ({e!r}); "
                    f"{DOWNLOAD_HINT}, or {REENCODE_HINT}"
                ) from e
            decoded[key] = (float(frame.pts * tb) - start, encoder.frame(frame))
    return {t: decoded[key] for t, key in wanted.items()}


def decode_frames(
    path: str | os.PathLike,
    timestamps: Sequence[float],
    *,
    max_pixels: int = 50_176,
    backend: str = "pyav",
    jpeg_quality: int = 85,
    region: Sequence[float] | None = None,
    sampling: str = "exact",
    size: tuple[int, int] | None = None,
    encoding: str = "area",
) -> list[Frame]:
    """Decode the frame nearest each timestamp (s), resized to max_pixels, in request order.

    `region` (start, end) selects a band of a still image's height (see agents.media.stills).
    `sampling="keyframe"` decodes the keyframe nearest each time instead (pyav only): far
    less work on long videos; each Frame's `timestamp` is the keyframe's real time.
    `size` (width, height) replaces the max_pixels fit, and `encoding` names how frames are
    resized and encoded (`agents.media.frame_encoding`: "qwen" is qwen-vl-utils' bicubic and
    PIL JPEG).
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown video backend {backend!r}; use one of {BACKENDS}")
    if sampling not in SAMPLINGS:
        raise ValueError(f"unknown frame sampling {sampling!r}; use one of {SAMPLINGS}")
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown frame encoding {encoding!r}; use one of {ENCODINGS}")
    info = probe(path)
    times = _check_times(info, timestamps)
    if not times:
        return []
    if is_still(info):
        try:
            found = stills.decode(
                Path(info.path),
                info.codec,
                times,
                region=region,
                fit=lambda w, h: fit_pixels(w, h, max_pixels),
                encode=lambda image, size: encode_bgr(image, size, jpeg_quality),
            )
        except ValueError as exc:
            raise VideoError(str(exc)) from exc
        return [Frame(found[t][0], t, found[t][2], found[t][3], found[t][1]) for t in times]
    size = tuple(size) if size else fit_pixels(info.width, info.height, max_pixels)
    encoder = Encoder(encoding, size, jpeg_quality)
    if sampling == "keyframe":
        decode = _decode_keyframes
    else:
        decode = _decode_pyav if backend == "pyav" else _decode_decord
    found = decode(info, times, encoder)
    log.debug("decoded %d frames from %s at %dx%d", len(found), info.path, *size)
    return [Frame(found[t][0], t, size[0], size[1], found[t][1]) for t in times]


async def adecode_frames(
    path: str | os.PathLike, timestamps: Sequence[float], **kw: object
) -> list[Frame]:
    """decode_frames in a worker thread, so async graph nodes never block the event loop."""
    return await asyncio.to_thread(decode_frames, path, timestamps, **kw)
