"""A chat-completions body as JSON bytes, each image data URL encoded once, not per request.

A 64-frame request is half a megabyte of base64 inside JSON strings, and `json.dumps` scans
every byte of it again for each request that carries the frame: the overview frames go out
with every main-agent turn. Here each image URL is swapped for a placeholder, the small rest
is dumped, and the URLs' encodings (cached by string) are spliced back in. The bytes are the
ones the OpenAI client would send (``ensure_ascii=False`` and compact separators).
"""

from __future__ import annotations

import functools
import json
import secrets
from typing import Any

_MIN_CACHED = 1024  # shorter URLs are encoded in place


def dumps(value: Any) -> bytes:
    """The OpenAI client's JSON encoding of `value`."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


@functools.lru_cache(maxsize=512)  # a run's overview and window frames, a few MB
def _encoded_url(url: str) -> bytes:
    return dumps(url)


def body_bytes(body: dict[str, Any]) -> bytes:
    """`dumps(body)`, with the image URLs of ``body["messages"]`` encoded through the cache."""
    marker = f"\x00img-{secrets.token_hex(8)}-"  # a NUL is escaped in any real text: no clash
    urls: list[str] = []
    messages = [_swapped(m, marker, urls) for m in body.get("messages") or []]
    if not urls:
        return dumps(body)
    pieces = dumps({**body, "messages": messages}).split(dumps(marker)[:-1])
    out = [pieces[0]]
    for piece in pieces[1:]:
        index, _, rest = piece.partition(b'"')
        out += (_encoded_url(urls[int(index)]), rest)
    return b"".join(out)


def _swapped(message: Any, marker: str, urls: list[str]) -> Any:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    parts = []
    for part in content:
        image = part.get("image_url") if isinstance(part, dict) else None
        url = image.get("url") if isinstance(image, dict) else None
        if isinstance(url, str) and len(url) >= _MIN_CACHED:
            part = {**part, "image_url": {**image, "url": f"{marker}{len(urls)}"}}
            urls.append(url)
        parts.append(part)
    return {**message, "content": parts}
