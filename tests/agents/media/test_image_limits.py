"""Huge images are refused from their header, before a pixel is decoded (still media, server)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from agents.media import stills, video
from agents.media.image_header import image_size


def png_header_only(path: Path, width: int, height: int) -> Path:
    """A PNG whose header claims width x height and whose pixel data is missing: decoding it
    fails, so only a check that reads the header first can name its size."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", b"\0" * 8))
    return path


@pytest.mark.parametrize("ext", ["png", "jpg", "bmp", "webp"])
def test_the_header_gives_the_size_of_each_still_format(tmp_path, ext):
    path = tmp_path / f"image.{ext}"
    assert cv2.imwrite(str(path), np.full((123, 457, 3), 200, np.uint8))
    assert image_size(path) == (457, 123)


def test_other_files_have_no_image_size(tmp_path):
    (tmp_path / "notes.png").write_bytes(b"not an image at all")
    assert image_size(tmp_path / "notes.png") is None
    assert image_size(tmp_path / "missing.png") is None


def test_a_valid_9000x9000_image_is_refused_with_a_clear_message(tmp_path):
    path = tmp_path / "poster.png"
    assert cv2.imwrite(str(path), np.zeros((9000, 9000), np.uint8))  # valid, 81M pixels
    with pytest.raises(video.VideoError, match=r"9000x9000 \(81M pixels\).*downscale"):
        video.probe(path)


def test_the_size_is_checked_before_decoding(tmp_path):
    path = png_header_only(tmp_path / "huge.png", 9000, 9000)
    with pytest.raises(ValueError, match="over the 40M-pixel limit"):
        stills.decode(path, stills.IMAGE, [0.5], region=None, fit=None, encode=None)
    small = png_header_only(tmp_path / "small.png", 90, 90)
    with pytest.raises(ValueError, match="cannot be read as an image"):
        stills.decode(small, stills.IMAGE, [0.5], region=None, fit=None, encode=None)


def test_a_deck_page_over_the_limit_is_refused(tmp_path):
    deck = tmp_path / "deck"
    deck.mkdir()
    cv2.imwrite(str(deck / "page_1.png"), np.zeros((40, 30, 3), np.uint8))
    png_header_only(deck / "page_2.png", 7000, 7000)
    assert video.probe(deck).duration == 2.0  # probing reads the first page's header only
    frames = video.decode_frames(deck, [0.5], max_pixels=4096)
    assert (frames[0].width, frames[0].height) == (30, 40)
    with pytest.raises(video.VideoError, match="7000x7000"):
        video.decode_frames(deck, [1.5], max_pixels=4096)


def test_the_server_refuses_a_huge_image_from_its_header(tmp_path):
    messages = pytest.importorskip("serving.messages")
    import base64

    raw = png_header_only(tmp_path / "huge.png", 9000, 9000).read_bytes()
    url = "data:image/png;base64," + base64.b64encode(raw).decode()
    with pytest.raises(messages.RequestError, match=r"9000x9000.*over this server's limit"):
        messages.decode_image(url)
