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
    from tests.support.downloads import make_clip

    return make_clip(tmp_path_factory.mktemp("clip"))


@pytest.fixture
def board(tmp_path: Path):
    from graphs.store.sqlite_board import Board

    board = Board(tmp_path / "board.sqlite")
    yield board
    board.close()


def _postgres_missing() -> str | None:
    from tests.support.pg_cluster import server_bin

    if server_bin() is None:
        return "PostgreSQL's server is not installed (Debian: apt-get install postgresql)"
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[postgres]')"
    return None


def need_postgres() -> None:
    """Skip, or fail where CI asks for PostgreSQL (PARAVT_POSTGRES_REQUIRED=1), without it."""
    missing = _postgres_missing()
    if missing and os.environ.get("PARAVT_POSTGRES_REQUIRED") == "1":
        pytest.fail(f"PARAVT_POSTGRES_REQUIRED: {missing}")
    if missing:
        pytest.skip(missing)


@pytest.fixture(scope="session")
def pg_cluster():
    """A throwaway PostgreSQL cluster for the session (tests/support/pg_cluster.py)."""
    need_postgres()
    from tests.support.pg_cluster import start_cluster, stop_cluster

    cluster = start_cluster()
    yield cluster
    stop_cluster(cluster)


@pytest.fixture
def pg_url(pg_cluster) -> str:
    """A new empty database on the session's cluster; its URL, password included."""
    return pg_cluster.create_database()


@pytest.fixture
def own_cluster():
    """A cluster of this test's own, which it may stop and restart."""
    need_postgres()
    from tests.support.pg_cluster import start_cluster, stop_cluster

    cluster = start_cluster()
    yield cluster
    stop_cluster(cluster)
