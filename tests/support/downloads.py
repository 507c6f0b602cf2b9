"""Build benchmark downloads on disk for the loader tests: real mp4 clips, zips, parquet."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest


def make_clip(folder: Path) -> bytes:
    """The bytes of one tiny real mp4 (64x64, 2 s, H.264), written by agents.synthetic."""
    from agents.synthetic import make_video

    path = folder / "clip.mp4"
    make_video(path, seed=5, duration=2.0, fps=4.0, width=64, height=64, n_needles=0)
    return path.read_bytes()


def png(gray: int = 200) -> bytes:
    """A tiny real 8x8 PNG (cv2 is a core dependency; Pillow is not)."""
    import cv2
    import numpy as np

    ok, data = cv2.imencode(".png", np.full((8, 8, 3), gray, dtype=np.uint8))
    assert ok
    return data.tobytes()


def place(root: Path, data: bytes, *relative: str) -> None:
    """Write ``data`` at each relative path under ``root``."""
    for rel in relative:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def write_zip(path: Path, members: dict[str, bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as packed:
        for name, data in members.items():
            packed.writestr(name, data)


def write_parquet(path: Path, rows: list[dict], schema=None) -> None:
    """A real parquet file (pyarrow), with the given arrow schema when there is one."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


FIXTURES = Path(__file__).parents[1] / "fixtures" / "benchmarks"
DOC_FIXTURES = Path(__file__).parents[1] / "fixtures" / "doc_benchmarks"


def stage(name: str, tmp_path: Path, fixtures: Path = FIXTURES) -> Path:
    """A writable copy of a fixture folder (under tests/fixtures/benchmarks by default)."""
    return Path(shutil.copytree(fixtures / name, tmp_path / name))


def image_bytes(color: tuple[int, int, int], fmt: str = "PNG") -> bytes:
    """A tiny real 8x8 RGB image, PNG or JPEG (cv2 and numpy are core; Pillow is not)."""
    import cv2
    import numpy as np

    pixels = np.full((8, 8, 3), color[::-1], dtype=np.uint8)  # BGR
    ok, data = cv2.imencode(".jpg" if fmt == "JPEG" else ".png", pixels)
    assert ok
    return data.tobytes()


def place_image(root: Path, relative: str, color=(200, 30, 30)) -> Path:
    """A tiny image at ``root / relative``, JPEG for a .jpg name, else PNG."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(image_bytes(color, "JPEG" if path.suffix == ".jpg" else "PNG"))
    return path


def problems(result) -> dict[str, str]:
    """A loader result's errors, by record id."""
    return {err.record_id: err.problem for err in result.errors}
