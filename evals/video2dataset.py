"""Read video2dataset's ``--output_format files`` folders: videos named by a running key.

video2dataset (iejMac/video2dataset, ``FilesSampleWriter`` in ``data_writer.py``) writes each
sample as ``<folder>/<shard>/<key>.mp4`` with a ``<key>.json`` beside it holding the input
columns (``url``, ...) plus ``key``, ``status`` (``success`` or ``failed_to_download`` /
``failed_to_subsample``) and ``error_message``; a failed sample has the json and no video.
So ``videos/00000/000000000.mp4`` is found by the YouTube id inside its sidecar's ``url``,
never by its file name.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from evals.media import VIDEO_EXTENSIONS

MAX_SIDECAR_BYTES = 5_000_000  # a sidecar with yt-dlp metadata is a few kB to a few hundred


@dataclass
class Downloads:
    """What the sidecars under some folders say, by YouTube id."""

    videos: dict[str, Path] = field(default_factory=dict)  # id -> the downloaded video
    failed: dict[str, str] = field(default_factory=dict)  # id -> video2dataset's error
    sidecars: int = 0  # sidecar files read


def youtube_id(url: str) -> str | None:
    """The video id of a YouTube watch, short or embed URL.

    >>> youtube_id("https://www.youtube.com/watch?v=sKAYQGR4dDE")
    'sKAYQGR4dDE'
    >>> youtube_id("https://youtu.be/sKAYQGR4dDE?t=3"), youtube_id("https://example.com/a.mp4")
    ('sKAYQGR4dDE', None)
    """
    parsed = urlparse(url.strip())
    host = parsed.netloc.lower().removeprefix("www.").removeprefix("m.")
    if host == "youtu.be":
        return parsed.path.strip("/").split("/")[0] or None
    if host.endswith("youtube.com"):
        if parsed.path == "/watch":
            return (parse_qs(parsed.query).get("v") or [None])[0]
        parts = parsed.path.strip("/").split("/")
        if len(parts) == 2 and parts[0] in ("embed", "shorts", "v", "live"):
            return parts[1]
    return None


def _sidecar(path: Path) -> dict | None:
    try:
        if path.stat().st_size > MAX_SIDECAR_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # not a sidecar (an annotation file, a stats file, a partial write)
    return data if isinstance(data, dict) and isinstance(data.get("url"), str) else None


def _video_beside(sidecar: Path) -> Path | None:
    for ext in VIDEO_EXTENSIONS:
        if sidecar.with_suffix(ext).is_file():
            return sidecar.with_suffix(ext)
    return None


def scan(folders: Iterable[Path]) -> Downloads:
    """Every sidecar under ``folders`` (recursively); the first folder wins an id."""
    found = Downloads()
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.json")):
            meta = _sidecar(path)
            vid = youtube_id(meta["url"]) if meta else None
            if vid is None:
                continue
            found.sidecars += 1
            video = _video_beside(path)
            if video is not None:
                found.videos.setdefault(vid, video)
            elif vid not in found.videos:
                status = meta.get("status") or "no video beside the sidecar"
                found.failed.setdefault(vid, str(meta.get("error_message") or status))
    for vid in found.videos:
        found.failed.pop(vid, None)  # a later retry downloaded it
    return found
