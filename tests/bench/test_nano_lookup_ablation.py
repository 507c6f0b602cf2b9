"""bench/nano_lookup_ablation.py: its variants, and a run of a few steps end to end."""

import json
import types
from pathlib import Path

import pytest

from tests.support.bench_scripts import load_bench

NANO = Path(__file__).resolve().parents[2] / "assets" / "paravt-nano"
needs_nano = pytest.mark.skipif(not (NANO / "model.safetensors").exists(), reason="no shipped nano")


def _ablation():
    return load_bench("nano_lookup_ablation")


@needs_nano
def test_the_variants_change_the_depth_and_make_each_sighting_one_token():
    ablation = _ablation()
    tokenizer, _, model = ablation.load(NANO, text_layers=6, one_token_sightings=True)
    assert model.config.text_config.num_hidden_layers == 6
    assert model.get_input_embeddings().weight.shape[0] == len(tokenizer)
    note = "Seen a red circle from 3 to 5 seconds; the circle is red."
    assert tokenizer.tokenize(note)[2] == " red circle"
    plain, _, _ = ablation.load(NANO, text_layers=None, one_token_sightings=False)
    assert " red circle" not in plain.tokenize(note)


@needs_nano
def test_a_short_run_scores_every_held_out_row_at_each_evaluation(tmp_path):
    ablation = _ablation()
    args = types.SimpleNamespace(
        init=NANO,
        steps=2,
        every=1,
        warmup_steps=1,
        train_plans=3,
        held_plans=12,
        text_layers=None,
        one_token_sightings=True,
        every_needle=True,
        json=tmp_path / "out.json",
    )
    report = ablation.run(args)
    json.dumps(report)
    assert [e["step"] for e in report["evals"]] == [1, 2]
    assert report["held_out_rows"] > 0
    for evaluation in report["evals"]:
        right = evaluation["right"]
        assert sum(n for _, n in right.values()) == report["held_out_rows"]
        assert all(0 <= ok <= n for ok, n in right.values())
        wrong = sum(n - ok for ok, n in right.values())
        assert sum(evaluation["first_miss_after"].values()) == wrong


def test_the_ablations_doctests_pass():
    import doctest

    result = doctest.testmod(_ablation())
    assert result.attempted >= 1 and result.failed == 0
