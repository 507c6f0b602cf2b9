"""Tests for evals.stats: hand-computed tables, exact McNemar, paired cluster bootstrap."""

from __future__ import annotations

import doctest
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals import stats
from evals.stats import (
    ci95,
    clustered_se,
    macro_mean,
    mcnemar_exact,
    mean_with_se,
    micro_mean,
    paired_bootstrap,
)

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False)


def test_docstring_examples():
    result = doctest.testmod(stats, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


# --- means and standard errors -------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "mean", "se"),
    [
        ([2.0], 2.0, 0.0),
        ([1.0, 3.0], 2.0, 1.0),  # s = sqrt(2), se = sqrt(2)/sqrt(2)
        ([1.0, 2.0, 3.0, 4.0], 2.5, math.sqrt(5 / 3) / 2),  # s^2 = 5/3
        ([1, 0, 0, 0, 1], 0.4, math.sqrt(0.3 / 5)),  # s^2 = 1.2/4
    ],
)
def test_mean_with_se_table(values, mean, se):
    got_mean, got_se = mean_with_se(values)
    assert got_mean == pytest.approx(mean)
    assert got_se == pytest.approx(se)


def test_mean_with_se_empty_raises():
    with pytest.raises(ValueError):
        mean_with_se([])


@pytest.mark.parametrize(
    ("values", "clusters", "se"),
    [
        # mean 0.5; cluster residual sums 1, -1; 2/1 * 2 / 16 = 0.25
        ([1, 1, 0, 0], ["v1", "v1", "v2", "v2"], 0.5),
        # mean 0.5; residual sums 0, 0: clusters are internally balanced
        ([1, 0, 1, 0], ["v1", "v1", "v2", "v2"], 0.0),
        # mean 1; residuals -1,0,1,2,-2 -> sums -1, 3, -2; 3/2 * 14 / 25 = 0.84
        ([0, 1, 2, 3, -1], ["a", "b", "b", "b", "c"], math.sqrt(0.84)),
        # one cluster: not estimable
        ([0, 1, 2], ["v", "v", "v"], 0.0),
    ],
)
def test_clustered_se_table(values, clusters, se):
    assert clustered_se(values, clusters) == pytest.approx(se, abs=1e-12)


def test_clustered_se_label_type_and_order_do_not_matter():
    values = [0.0, 1.0, 2.0, 3.0, -1.0]
    assert clustered_se(values, ["a", "b", "b", "b", "c"]) == pytest.approx(
        clustered_se(values, ["z", "y", "y", "y", "x"])
    )


def test_clustered_se_length_mismatch_raises():
    with pytest.raises(ValueError, match="cluster labels"):
        clustered_se([1.0, 2.0], ["a"])


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=2, max_size=40))
def test_clustered_se_singletons_equal_plain_se(values):
    # G = n, so the CR1 factor G/(G-1) is the n/(n-1) of the ddof=1 variance.
    n = len(values)
    singleton = clustered_se(values, [f"c{i}" for i in range(n)])
    _, se = mean_with_se(values)
    assert singleton == pytest.approx(se, rel=1e-9, abs=1e-9)
    # Without the small-sample factors both reduce to the ddof=0 standard error.
    biased = float(np.std(values, ddof=0)) / math.sqrt(n)
    assert singleton * math.sqrt((n - 1) / n) == pytest.approx(biased, rel=1e-9, abs=1e-9)


def test_clustered_se_grows_with_within_cluster_correlation():
    rng = np.random.default_rng(1)
    effects = np.repeat(rng.normal(size=50), 6)  # 50 videos, 6 questions each
    values = effects + 0.1 * rng.normal(size=effects.size)
    labels = [f"v{i // 6}" for i in range(values.size)]
    assert clustered_se(values, labels) > 1.8 * mean_with_se(values)[1]


def test_ci95():
    lo, hi = ci95(0.5, 0.1)
    assert lo == pytest.approx(0.5 - 0.1959963984540054)
    assert hi == pytest.approx(0.5 + 0.1959963984540054)
    assert ci95(0.3, 0.0) == (0.3, 0.3)


def test_macro_and_micro_mean():
    groups = {"count": [1, 0, 0, 0], "order": [1, 1], "plot": [1, 1, 1, 0, 0, 0]}
    assert macro_mean(groups) == pytest.approx((0.25 + 1.0 + 0.5) / 3)
    assert micro_mean(groups) == pytest.approx(6 / 12)


@pytest.mark.parametrize("fn", [macro_mean, micro_mean])
def test_macro_micro_reject_empty(fn):
    with pytest.raises(ValueError):
        fn({})
    with pytest.raises(ValueError):
        fn({"a": []})


# --- McNemar -------------------------------------------------------------------------


def _exact_p(b01: int, b10: int) -> float:
    n = b01 + b10
    if n == 0:
        return 1.0
    tail = sum(Fraction(math.comb(n, k), 2**n) for k in range(min(b01, b10) + 1))
    return float(min(Fraction(1), 2 * tail))


def _pairs(b01: int, b10: int, both_right: int = 0, both_wrong: int = 0):
    a, b = {}, {}
    rows = [(False, True)] * b01 + [(True, False)] * b10
    rows += [(True, True)] * both_right + [(False, False)] * both_wrong
    for i, (ra, rb) in enumerate(rows):
        a[f"q{i}"], b[f"q{i}"] = ra, rb
    return a, b


def test_mcnemar_known_value():
    out = mcnemar_exact(*_pairs(10, 2, both_right=30, both_wrong=7))
    assert (out["b01"], out["b10"], out["n_items"]) == (10, 2, 49)
    assert out["p_value"] == _exact_p(10, 2) == float(Fraction(2 * 79, 4096))
    assert out["p_value"] == pytest.approx(0.0386, abs=1e-4)


@pytest.mark.parametrize(
    ("b01", "b10", "p"),
    [
        (0, 0, 1.0),  # no discordant pairs
        (3, 3, 1.0),  # balanced: capped at 1
        (5, 0, 2 / 32),
        (0, 6, 2 / 64),
        (1, 8, 2 * 10 / 512),
    ],
)
def test_mcnemar_table(b01, b10, p):
    assert mcnemar_exact(*_pairs(b01, b10, both_right=4))["p_value"] == pytest.approx(p)


def test_mcnemar_uses_shared_ids_only():
    a = {"q1": False, "q2": True, "only_a": False}
    b = {"q1": True, "q2": True, "only_b": True}
    out = mcnemar_exact(a, b)
    assert (out["n_items"], out["b01"], out["b10"]) == (2, 1, 0)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_symmetric_and_exact(b01, b10):
    p = mcnemar_exact(*_pairs(b01, b10, both_right=1))["p_value"]
    assert p == mcnemar_exact(*_pairs(b10, b01, both_wrong=1))["p_value"] == _exact_p(b01, b10)
    assert 0.0 < p <= 1.0


def test_mcnemar_large_n_is_finite():
    p = mcnemar_exact(*_pairs(1500, 1300))["p_value"]
    assert 0.0 < p < 0.01


# --- paired bootstrap ----------------------------------------------------------------


def _synthetic(n_clusters: int, per_cluster: int, seed: int = 0, lift: float = 0.1):
    """Correlated right/wrong scores: b is a plus an expected `lift` on items a got wrong."""
    rng = np.random.default_rng(seed)
    ease = np.repeat(rng.uniform(0.2, 0.8, size=n_clusters), per_cluster)
    a_right = rng.uniform(size=ease.size) < ease
    flip = rng.uniform(size=ease.size) < lift / (1 - ease)  # P(b right | a wrong)
    b_right = a_right | flip
    ids = [f"q{i}" for i in range(ease.size)]
    clusters = {iid: f"v{i // per_cluster}" for i, iid in enumerate(ids)}
    a = {iid: float(x) for iid, x in zip(ids, a_right, strict=True)}
    b = {iid: float(x) for iid, x in zip(ids, b_right, strict=True)}
    return a, b, clusters


def test_bootstrap_identical_runs_give_zero():
    a, _, clusters = _synthetic(40, 3)
    out = paired_bootstrap(a, dict(a), clusters, n_resamples=500)
    assert (out["delta"], out["ci_low"], out["ci_high"], out["p_b_better"]) == (0, 0, 0, 0)
    assert (out["n_items"], out["n_clusters"]) == (120, 40)


def test_bootstrap_identical_runs_custom_aggregate_give_zero():
    a, _, clusters = _synthetic(20, 3)

    def agg(ids):
        m = float(np.mean([a[i] for i in ids]))
        return m, m

    out = paired_bootstrap(a, dict(a), clusters, aggregate=agg, n_resamples=200)
    assert (out["delta"], out["ci_low"], out["ci_high"]) == (0, 0, 0)


def test_bootstrap_better_everywhere():
    a, _, clusters = _synthetic(30, 2)
    b = {k: v + 0.5 for k, v in a.items()}
    out = paired_bootstrap(a, b, clusters, n_resamples=500)
    assert out["p_b_better"] == 1.0
    assert out["delta"] == pytest.approx(0.5)
    assert out["ci_low"] == pytest.approx(0.5) and out["ci_high"] == pytest.approx(0.5)


def test_bootstrap_ci_covers_true_delta_and_matches_clustered_se():
    a, b, clusters = _synthetic(300, 4, seed=3, lift=0.1)
    out = paired_bootstrap(a, b, clusters, n_resamples=4000, seed=1)
    assert out["ci_low"] < 0.1 < out["ci_high"]
    assert out["ci_low"] > 0 and out["p_b_better"] > 0.99
    ids = sorted(a)
    se = clustered_se([b[i] - a[i] for i in ids], [clusters[i] for i in ids])
    width = out["ci_high"] - out["ci_low"]
    assert width == pytest.approx(2 * 1.96 * se, rel=0.15)


def test_bootstrap_pairs_on_shared_ids():
    a = {"q1": 0.0, "q2": 1.0, "only_a": 1.0}
    b = {"q1": 1.0, "q2": 1.0, "only_b": 0.0}
    out = paired_bootstrap(a, b, {"q1": "v1", "q2": "v2"}, n_resamples=100)
    assert (out["n_items"], out["n_clusters"], out["delta"]) == (2, 2, 0.5)


def test_bootstrap_deterministic_by_seed():
    a, b, clusters = _synthetic(50, 3, seed=5)
    first = paired_bootstrap(a, b, clusters, n_resamples=1000, seed=7)
    assert first == paired_bootstrap(a, b, clusters, n_resamples=1000, seed=7)
    assert first != paired_bootstrap(a, b, clusters, n_resamples=1000, seed=8)


def test_bootstrap_custom_mean_aggregate_matches_vectorised_path():
    a, b, clusters = _synthetic(40, 3, seed=2)

    def plain(ids):
        return float(np.mean([a[i] for i in ids])), float(np.mean([b[i] for i in ids]))

    fast = paired_bootstrap(a, b, clusters, n_resamples=300, seed=4)
    slow = paired_bootstrap(a, b, clusters, aggregate=plain, n_resamples=300, seed=4)
    assert slow.keys() == fast.keys()
    for key in fast:
        assert slow[key] == pytest.approx(fast[key], abs=1e-12)


def test_bootstrap_macro_aggregate_changes_answer():
    # Task "big" (8 items): b loses 1 item. Task "small" (2 items): b wins both.
    # Micro: delta = (2 - 1) / 10 = +0.1. Macro: delta = (-1/8 + 2/2) / 2 = +0.4375.
    task = {f"big{i}": "big" for i in range(8)} | {"small0": "small", "small1": "small"}
    a = {i: 1.0 if t == "big" else 0.0 for i, t in task.items()}
    b = dict(a, big0=0.0, small0=1.0, small1=1.0)
    clusters = {i: i for i in task}

    def macro(ids):
        def score(run):
            groups: dict[str, list[float]] = {}
            for i in ids:
                groups.setdefault(task[i], []).append(run[i])
            return macro_mean(groups)

        return score(a), score(b)

    plain = paired_bootstrap(a, b, clusters, n_resamples=300)
    custom = paired_bootstrap(a, b, clusters, aggregate=macro, n_resamples=300)
    assert plain["delta"] == pytest.approx(0.1)
    assert custom["delta"] == pytest.approx(0.4375)
    assert custom["ci_high"] > plain["ci_high"]


def test_bootstrap_rejects_bad_input():
    a = {"q1": 1.0}
    with pytest.raises(ValueError, match="share no item ids"):
        paired_bootstrap(a, {"q2": 1.0}, {"q1": "v", "q2": "v"})
    with pytest.raises(ValueError, match="no cluster"):
        paired_bootstrap(a, a, {})
    with pytest.raises(ValueError, match="n_resamples"):
        paired_bootstrap(a, a, {"q1": "v"}, n_resamples=0)
