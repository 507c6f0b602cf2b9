"""OpenAI chat messages -> the chat template's messages and PIL images (no HTTP here).

Shared by the HTTP server and by training's in-process recording client, so both read a
request exactly alike.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from typing import Any

from PIL import Image

from serving.engine import RequestError

_DATA_URL = re.compile(r"data:image/[\w.+-]+;base64,(?P<data>.*)", re.DOTALL)
# Largest image decoded (4096x4096): clients send frames fitted to a pixel budget (about
# 50,176 pixels), so anything near this is a mistake that would cost gigabytes to decode.
MAX_IMAGE_PIXELS = 4096 * 4096


def decode_image(url: str, max_pixels: int = MAX_IMAGE_PIXELS) -> Image.Image:
    """Decode a base64 ``data:image/...`` URL into an RGB image, or raise ``RequestError``.

    The size is read from the header first (PIL opens lazily): an image over ``max_pixels``
    is refused before its pixels are allocated.
    """
    match = _DATA_URL.fullmatch(url.strip())
    if match is None:
        raise RequestError(
            f"image_url must be a base64 data URL (data:image/...;base64,...), got {url[:40]!r}",
            param="messages",
        )
    try:
        raw = base64.b64decode(match["data"], validate=True)
        image = Image.open(io.BytesIO(raw))
        width, height = image.size
        if width * height > max_pixels:
            raise RequestError(
                f"image_url is {width}x{height} ({width * height:,} pixels), over this "
                f"server's limit of {max_pixels:,}; resize frames to a pixel budget first",
                param="messages",
            )
        image.load()
        return image.convert("RGB")
    except (binascii.Error, ValueError, OSError, Image.DecompressionBombError) as exc:
        raise RequestError(f"image_url is not a decodable image: {exc}", param="messages") from exc


def convert_messages(messages: list[dict[str, Any]]) -> tuple[list[dict], list[Image.Image]]:
    """OpenAI messages -> chat-template messages (images as ``{"type": "image"}``) + images."""
    converted, images = [], []
    for i, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role not in ("system", "user", "assistant", "tool"):
            raise RequestError(
                f"messages[{i}].role must be system, user, assistant or tool", param="messages"
            )
        if isinstance(content, list):
            parts = []
            for part in content:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text" and isinstance(part.get("text"), str):
                    parts.append({"type": "text", "text": part["text"]})
                elif kind == "image_url":
                    url = part.get("image_url")
                    url = url.get("url") if isinstance(url, dict) else url
                    if not isinstance(url, str):
                        raise RequestError(f"messages[{i}]: image_url has no url", param="messages")
                    images.append(decode_image(url))
                    parts.append({"type": "image"})
                else:
                    raise RequestError(
                        f"messages[{i}]: unsupported content part {kind!r} "
                        "(text and image_url data URLs are supported)",
                        param="messages",
                    )
            content = parts
        elif content is not None and not isinstance(content, str):
            raise RequestError(
                f"messages[{i}].content must be a string or a list", param="messages"
            )
        out = {"role": role, "content": content if content is not None else ""}
        if message.get("tool_calls"):
            out["tool_calls"] = message["tool_calls"]
        converted.append(out)
    return converted, images
