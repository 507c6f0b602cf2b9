"""The frame sets prompts send: each decoded once per (file version, times, budget), kept in
memory (LRU) and optionally on disk, and sent as JPEG data URLs.

`agents.media.video` decodes; this module decides when. `DECODE_POOL` (set by
`agents.media.decode_pool.decode_processes`) sends the decodes to worker processes instead.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from typing import Any

from agents.media.frame_cache import FrameCache
from agents.media.video import Frame, decode_frames, resolve

DECODE_POOL: Any = None  # worker processes that decode instead (agents.media.decode_pool)
FRAME_CACHE = FrameCache(max_entries=256, disk_dir=os.environ.get("PARAVT_FRAME_CACHE"))


def encode_frames(
    path: str | os.PathLike,
    timestamps: tuple[float, ...],
    max_pixels: int,
    region: tuple[float, float] | None = None,
    sampling: str = "exact",
    look: tuple[tuple[int, int], str] | None = None,
) -> tuple[Frame, ...]:
    """Cached decode_frames for prompt-time rendering: made once per (file, times, budget).

    Keyed by resolved path, mtime and size; `FRAME_CACHE.set_disk_dir(...)` (or the
    PARAVT_FRAME_CACHE variable) keeps the frames across processes and reruns. `look` is an
    exact (width, height) and encoding (`agents.media.frame_encoding`) instead of the pixel budget.
    """
    p, times, band, key = _frames_key(path, timestamps, max_pixels, region, sampling, look)
    options = {"size": look[0], "encoding": look[1]} if look else {}

    def make() -> tuple[Frame, ...]:
        if (picked := _picked_from_memory(key, times)) is not None:
            FRAME_CACHE.stats["frames_reused"] += len(times)
            return picked
        FRAME_CACHE.stats["frames_decoded"] += len(times)
        decode = DECODE_POOL.decode if DECODE_POOL is not None else decode_frames
        return tuple(
            decode(p, times, max_pixels=max_pixels, region=band, sampling=sampling, **options)
        )

    return FRAME_CACHE.get_or_make(
        key,
        make,
        dump=_dump_frames,
        load=_load_frames,
    )


def cached_frames(
    path: str | os.PathLike,
    timestamps: tuple[float, ...],
    max_pixels: int,
    region: tuple[float, float] | None = None,
    sampling: str = "exact",
    look: tuple[tuple[int, int], str] | None = None,
) -> tuple[Frame, ...] | None:
    """`encode_frames`' frames if they are in memory now, else None: a ``stat`` of the file
    and a lookup, never a decode."""
    key = _frames_key(path, timestamps, max_pixels, region, sampling, look)[-1]
    return FRAME_CACHE.peek(key)


def ref_frames(ref: Mapping[str, Any], *, cached_only: bool = False) -> tuple[Frame, ...] | None:
    """The frames of a prompt's frame reference (`agents.prompts.frames_part`), by
    `encode_frames`; with ``cached_only``, by `cached_frames` (None unless in memory)."""
    region = tuple(ref["region"]) if ref.get("region") else None
    args = (ref["video"], tuple(ref["timestamps"]), ref["max_pixels"], region)
    sampling = ref.get("sampling", "exact")
    look = (tuple(ref["size"]), ref.get("encoding", "area")) if ref.get("size") else None
    return (cached_frames if cached_only else encode_frames)(*args, sampling=sampling, look=look)


def _picked_from_memory(key: tuple, times: tuple[float, ...]) -> tuple[Frame, ...] | None:
    """The frames at `times` picked out of a frame set in memory of the same file, budget,
    band and look (the verify gate's check shows some of the frames its sub-agent saw), or
    None when no such set holds them all."""
    rest = key[:3] + key[4:]  # the key without its times (`_frames_key`)

    def pick(other, frames):
        if not (isinstance(other, tuple) and other[:3] + other[4:] == rest):
            return None
        by_time = {f.requested: f for f in frames}
        return tuple(by_time[t] for t in times) if all(t in by_time for t in times) else None

    return FRAME_CACHE.find(pick)


def _frames_key(path, timestamps, max_pixels, region, sampling, look=None):
    """(resolved path, times, band, cache key) of a frame set."""
    p, st = resolve(path)
    times = tuple(float(t) for t in timestamps)
    band = tuple(float(r) for r in region) if region is not None else None
    key = (str(p), st.st_mtime_ns, st.st_size, times, max_pixels) + ((band,) if band else ())
    key += (sampling,) if sampling != "exact" else ()
    return p, times, band, key + ((look,) if look else ())


def _dump_frames(frames: tuple[Frame, ...]) -> list[tuple[dict, bytes]]:
    meta = ("timestamp", "requested", "width", "height")
    return [({k: getattr(f, k) for k in meta}, f.jpeg) for f in frames]


def _load_frames(entry) -> tuple[Frame, ...]:
    return tuple(Frame(jpeg=jpeg, **meta) for meta, jpeg in entry)


def data_url(frame: Frame) -> str:
    """A frame as an OpenAI-style image_url data URL (made once per frame: a cached frame is
    sent in every request that shows it, and the same string lets the body's JSON encoder
    reuse its encoding, ``agents.client.wire_json``)."""
    url = frame.__dict__.get("_data_url")
    if url is None:
        kind = "png" if frame.jpeg.startswith(b"\x89PNG") else "jpeg"  # qwen-png frames
        url = f"data:image/{kind};base64," + base64.b64encode(frame.jpeg).decode("ascii")
        frame.__dict__["_data_url"] = url  # a frozen dataclass still has a __dict__
    return url
