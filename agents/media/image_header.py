"""An image file's width and height from its header, without decoding a pixel.

So that still media can be refused before a huge image is decoded (and allocated), and
probed without decoding at all. Reads PNG, JPEG (any SOF marker), WebP (VP8, VP8L, VP8X)
and BMP headers; anything else gives None.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# JPEG start-of-frame markers (baseline, progressive, lossless, arithmetic); not C4, C8, CC
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_NO_LENGTH = {0x01, *range(0xD0, 0xD9)}  # TEM, RSTn, SOI, EOI carry no length field


def image_size(path: str | Path) -> tuple[int, int] | None:
    """(width, height) read from the header, or None if it is not a readable PNG, JPEG,
    WebP or BMP header."""
    try:
        with open(path, "rb") as f:
            head = f.read(32)
            if head.startswith(PNG_MAGIC) and head[12:16] == b"IHDR":
                return struct.unpack(">II", head[16:24])
            if head[:2] == b"BM" and len(head) >= 26:
                return _bmp(head)
            if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
                return _webp(head)
            if head[:2] == b"\xff\xd8":
                f.seek(2)
                return _jpeg(f)
    except (OSError, struct.error):
        return None
    return None


def _bmp(head: bytes) -> tuple[int, int]:
    (dib,) = struct.unpack("<I", head[14:18])
    if dib == 12:  # the old OS/2 header: 16-bit sizes
        return struct.unpack("<HH", head[18:22])
    width, height = struct.unpack("<ii", head[18:26])
    return abs(width), abs(height)  # a negative height means rows stored top-down


def _webp(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 ":  # lossy: 14-bit sizes after the frame tag and start code
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":  # lossless: 14-bit sizes minus one, packed after the signature
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":  # extended: 24-bit canvas sizes minus one
        return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
    return None


def _jpeg(f: BinaryIO) -> tuple[int, int] | None:
    """Walk the marker segments to the first start-of-frame."""
    while True:
        byte = f.read(1)
        if not byte:
            return None
        if byte != b"\xff":
            continue  # entropy-coded data or padding between segments
        marker = f.read(1)
        while marker == b"\xff":  # fill bytes
            marker = f.read(1)
        if not marker:
            return None
        code = marker[0]
        if code == 0x00 or code in _NO_LENGTH:
            continue
        (length,) = struct.unpack(">H", f.read(2))
        if code in _SOF:
            height, width = struct.unpack(">xHH", f.read(5))
            return width, height
        f.seek(length - 2, 1)
