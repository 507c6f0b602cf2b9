"""Fixtures of the evaluation tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.needle_eval import NEEDLE, SMALL


@pytest.fixture(scope="module")
def needle_dir(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("needle-data")
    NEEDLE.load(data, **SMALL)  # generate the videos once for the module
    return data
