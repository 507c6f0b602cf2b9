"""Shared fixtures: synthetic videos on disk, boards, compiled graphs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def needle_video(tmp_path_factory) -> SyntheticVideo:  # noqa: F821
    """A 60 s synthetic video with one needle, shared by the whole session."""
    from agents.synthetic import make_video

    path = tmp_path_factory.mktemp("videos") / "needle.mp4"
    return make_video(path, seed=7, duration=60.0, n_needles=1)


@pytest.fixture(scope="session")
def clip(tmp_path_factory) -> bytes:
    """One tiny real mp4 (64x64, 2 s); the loader tests copy it wherever a video belongs."""
    from tests.downloads import make_clip

    return make_clip(tmp_path_factory.mktemp("clip"))


@pytest.fixture
def board(tmp_path: Path):
    from graphs.board import Board

    board = Board(tmp_path / "board.sqlite")
    yield board
    board.close()
