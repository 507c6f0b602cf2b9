"""How a decoded frame becomes the JPEG a prompt sends: resized to its size, then encoded.

Three encodings, named in a frame reference's ``encoding``:

- ``area`` (the project's own): OpenCV's INTER_AREA resize and JPEG (less CPU than PIL).
- ``qwen``: what qwen-vl-utils and the ParaVT release's evaluation driver make of a frame: a
  bicubic, antialiased resize (PIL's filter is the one torchvision's antialiased bicubic
  follows), then PIL's JPEG at quality 85 (``paravt/eval/utils.pil_to_b64``).
- ``qwen-png``: the same resize, then PNG, as the release's RL rollouts send frames
  (AReaL's ``image2base64``).

The decoder hands over a frame object with ``to_ndarray(format=...)`` (PyAV's VideoFrame) or
an RGB array (decord), so this module decodes nothing.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

ENCODINGS = ("area", "qwen", "qwen-png")


def encode_bgr(bgr: np.ndarray, size: tuple[int, int], quality: int) -> bytes:
    """Resize (INTER_AREA) and JPEG-encode a BGR image."""
    if (bgr.shape[1], bgr.shape[0]) != size:
        bgr = cv2.resize(bgr, size, interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError(f"OpenCV failed to JPEG-encode a {size[0]}x{size[1]} frame")
    return buf.tobytes()


def encode_rgb_bicubic(
    rgb: np.ndarray, size: tuple[int, int], quality: int, image_format: str = "JPEG"
) -> bytes:
    """Resize (bicubic, antialiased) and encode an RGB image with PIL (JPEG or PNG)."""
    from PIL import Image

    image = Image.fromarray(np.ascontiguousarray(rgb), mode="RGB")
    if image.size != size:
        image = image.resize(size, Image.Resampling.BICUBIC)
    out = io.BytesIO()
    if image_format == "PNG":
        image.save(out, format="PNG")
    else:
        image.save(out, format="JPEG", quality=quality)
    return out.getvalue()


@dataclass(frozen=True)
class Encoder:
    """One frame set's encoding: its name, output size and JPEG quality."""

    name: str
    size: tuple[int, int]
    quality: int = 85

    def __post_init__(self) -> None:
        if self.name not in ENCODINGS:
            raise ValueError(f"unknown frame encoding {self.name!r}; use one of {ENCODINGS}")

    def frame(self, frame: Any) -> bytes:
        """A decoder's frame (anything with ``to_ndarray(format=...)``, e.g. PyAV's)."""
        if self.name == "area":
            return encode_bgr(frame.to_ndarray(format="bgr24"), self.size, self.quality)
        return self.rgb(frame.to_ndarray(format="rgb24"))

    def rgb(self, rgb: np.ndarray) -> bytes:
        """An RGB array (decord's frames)."""
        if self.name == "area":
            return encode_bgr(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), self.size, self.quality)
        image_format = "PNG" if self.name == "qwen-png" else "JPEG"
        return encode_rgb_bicubic(rgb, self.size, self.quality, image_format)
