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


def test_points_on_top_of_each_other_share_one_label(study):
    table = {
        "isolated": {"tokens_per_sample": 2372.4, "score": 0.8587},
        "shared": {"tokens_per_sample": 2372.4, "score": 0.8587},
        "verified": {"tokens_per_sample": 3974.1, "score": 0.8124},
        "verified_length": {"tokens_per_sample": 4225.5, "score": 0.8124},
        "shared_vote5": {"tokens_per_sample": 11795.0, "score": 0.854},
    }
    names = [names for names, _, _ in study.label_groups(table)]
    assert names == [["isolated", "shared"], ["verified", "verified_length"], ["shared_vote5"]]
