"""Still media on the video time axis: an image, or a folder of document pages.

So that charts, slides and documents run through the same graph, tools and prompts:

- a deck (a folder of page images) is a video at 1 page per second: page k (1-based)
  spans seconds k-1 to k, so `crop_video(2, 5)` looks at pages 3 to 5;
- an image is one second long, and a window [start, end] is the horizontal band from
  `start` to `end` of its height (0 = top, 1 = bottom): `crop_video(0.5, 1.0)` zooms into
  the bottom half at the full pixel budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np

from agents.media.image_header import image_size

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
IMAGE, PAGES = "image", "pages"  # VideoInfo.codec of still media
STILL_SECONDS = 1.0  # the "duration" of one image
# Largest image decoded: a 600 dpi A4 page fits (35M); its BGR pixels take 120 MB.
MAX_IMAGE_PIXELS = 40_000_000


def is_image_path(path: Path) -> bool:
    return path.suffix.lower() in IMAGE_EXTENSIONS


def deck_pages(folder: Path) -> list[Path]:
    """A deck's page images in natural order (page_2 before page_10)."""

    def key(p: Path) -> list:
        return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name.lower())]

    return sorted((p for p in folder.iterdir() if p.is_file() and is_image_path(p)), key=key)


def read_image(path: Path) -> np.ndarray | None:
    """BGR pixels, or None when the file is not a readable image."""
    return cv2.imread(str(path), cv2.IMREAD_COLOR)


def page_of(t: float, pages: int) -> int:
    """The 0-based page shown at time t of a deck."""
    return min(max(int(t), 0), pages - 1)


def band(image: np.ndarray, region: Sequence[float] | None) -> np.ndarray:
    """The rows from region[0] to region[1] of the image height (the whole image if None)."""
    if region is None:
        return image
    height = image.shape[0]
    top = min(int(region[0] * height), height - 1)
    bottom = max(int(np.ceil(region[1] * height)), top + 1)
    return image[top:bottom]


def label(codec: str, t: float, region: Sequence[float] | None = None) -> str:
    """The text placed before a still frame in a prompt, in place of `<t seconds>`."""
    if codec == PAGES:
        return f"<page {int(t) + 1}>"
    if region is not None:
        return f"<image, rows {region[0]:.0%} to {region[1]:.0%} of its height>"
    return "<image>"


def probe(path: Path) -> tuple[float, int, int, str]:
    """(duration, width, height, kind) of an image or a deck; ValueError when unreadable."""
    if path.is_dir():
        pages = deck_pages(path)
        if not pages:
            raise ValueError(
                f"{path} is a folder with no page images ({', '.join(IMAGE_EXTENSIONS)})"
            )
        width, height = _size(pages[0])
        return float(len(pages)), width, height, PAGES
    width, height = _size(path)
    return STILL_SECONDS, width, height, IMAGE


def decode(
    path: Path,
    kind: str,
    times: Sequence[float],
    *,
    region: Sequence[float] | None,
    fit: Callable[[int, int], tuple[int, int]],
    encode: Callable[[np.ndarray, tuple[int, int]], bytes],
) -> dict[float, tuple[float, bytes, int, int]]:
    """time -> (page index, JPEG, width, height) for an image (its band `region`) or a deck."""
    pages = deck_pages(path) if kind == PAGES else [path]
    found = {}
    for t in times:
        index = page_of(t, len(pages))
        image = _read(pages[index])
        if kind == IMAGE:
            image = band(image, region)
        size = fit(image.shape[1], image.shape[0])
        found[t] = (float(index), encode(image, size), *size)
    return found


def _size(path: Path) -> tuple[int, int]:
    """Width and height from the file header, held to MAX_IMAGE_PIXELS before any decoding."""
    size = image_size(path)
    if size is None or min(size) < 1:
        raise ValueError(
            f"{path} cannot be read as an image (no PNG, JPEG, WebP or BMP header); "
            "check the file or convert it to PNG"
        )
    width, height = size
    if width * height > MAX_IMAGE_PIXELS:
        raise ValueError(
            f"{path} is {width}x{height} ({width * height / 1e6:.0f}M pixels), over the "
            f"{MAX_IMAGE_PIXELS / 1e6:.0f}M-pixel limit for still media; downscale it "
            "(e.g. to 6000 pixels on its longer side) and try again"
        )
    return width, height


def _read(path: Path) -> np.ndarray:
    _size(path)  # refuse a huge image before its pixels are allocated
    image = read_image(path)
    if image is None:
        raise ValueError(f"{path} cannot be read as an image; check the file or convert it to PNG")
    return image
