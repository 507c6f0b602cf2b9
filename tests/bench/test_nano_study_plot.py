"""bench/nano_study.py: the figure tells the study without note noise from the one with it."""

from __future__ import annotations

import pytest

from tests.support.bench_scripts import load_bench


@pytest.fixture(scope="module")
def study():
    return load_bench("nano_study")


def test_the_clean_and_the_noisy_table_are_drawn_apart(study, tmp_path):
    # "no note noise" holds the word "noise": a label test on that word drew both alike
    clean, noisy = study.style(study.CLEAN), study.style("note noise 0.3")
    assert clean != noisy
    row = {"tokens_per_sample": 100.0, "score": 0.5}
    tables = {study.CLEAN: {"shared": row}, "note noise 0.3": {"shared": row}}
    assert study.plot(tables, tmp_path / "study.png").stat().st_size > 0
