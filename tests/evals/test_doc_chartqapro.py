"""ChartQAPro: the relaxed-correctness scorer against the released script's rules, and the
loaders on small fixtures in the real formats (JSONL with image files, HF parquet)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.records import sample_from_json, sample_to_json
from evals.sample import Sample
from evals.scorers import chartqapro as chartqapro_scoring
from evals.tasks import chartqapro, documents
from tests.support.downloads import (
    DOC_FIXTURES,
    image_bytes,
    place_image,
    problems,
    stage,
    write_parquet,
)

# ----------------------------------------------------------------------------- ChartQAPro


@pytest.mark.parametrize(
    ("target", "prediction", "flags", "expected"),
    [
        ("12.5", "12.9", ["NO"], 1.0),  # 3.2% off
        ("12.5", "13.2", ["NO"], 0.0),  # 5.6% off
        ("50%", "50", ["NO"], 1.0),  # "%" stripped on both sides
        ("50", "51.5%", ["NO"], 1.0),
        ("0", "0.0", ["NO"], 1.0),  # a gold of 0 needs exactly 0
        ("0", "0.01", ["NO"], 0.0),
        ("1234", "1,234", ["NO"], 0.8),  # float() rejects commas: ANLS 1 - 1/5
        ("-3.5", "-3.6", ["NO"], 1.0),
        ("2016", "2017", ["NO"], 1.0),  # as a number, 0.05% off ...
        ("2016", "2017", ["YES"], 0.0),  # ... but a year must match exactly
        ("2016", "2016.0", ["YES"], 0.0),
        ("Canada", " CANADA ", ["NO"], 1.0),
        ("United States", "United State", ["NO"], 1 - 1 / 13),
        ("Paris", "London", ["NO"], 0.0),
        ("a", "A", ["NO"], 1.0),
        ("[Asia, Europe]", "['Asia', 'Europe']", ["NO"], 1.0),
        ("[Asia, Europe]", "['Europe', 'Asia']", ["NO"], 0.0),  # order matters
        ("[Asia, Europe]", "['Asia']", ["NO"], 0.5),  # a missing item scores 0
        ("[Asia, Europe]", "['Asia', 'Europe', 'Africa']", ["NO"], 2 / 3),
        ("[Asia, Europe]", "Asia, Europe", ["NO"], 0.0),  # not a list literal: one item
        ("[2009, 2010]", "['2009', '2011']", ["YES"], 0.5),  # flag repeated per item
        ("[10, 20]", "[10.2, 19.5]", ["NO"], 1.0),
        ("[New York, Boston]", "['New York', 'Boston']", ["NO"], (0.875 + 1) / 2),  # quirk
        ("unanswerable", "Unanswerable", ["NO"], 1.0),
    ],
)
def test_relaxed_correctness_follows_the_released_script(target, prediction, flags, expected):
    assert chartqapro_scoring.relaxed_correctness(target, prediction, flags) == pytest.approx(
        expected
    )


def chart_sample(target: str, qtype: str = "Factoid", flags=("NO",)) -> Sample:
    return Sample(
        "0",
        "",
        "q",
        "p",
        "open_ended",
        target,
        categories={"question_type": qtype},
        extra={"year_flags": list(flags)},
    )


@pytest.mark.parametrize(
    ("response", "target", "qtype", "flags", "robust", "paper"),
    [
        ("Final Answer: 12.9%.", "12.5", "Factoid", ["NO"], 1.0, 1.0),
        ("It rises.\nFinal Answer: 1,200.", "1,200", "Factoid", ["NO"], 1.0, 1.0),
        ("<think>2016 or 2017</think>\nFinal Answer: 2017", "2016", "Factoid", ["YES"], 0.0, 0.0),
        ("**Final Answer:** ['Asia', 'Europe']", "[Asia, Europe]", "Factoid", ["NO"], 1.0, 1.0),
        ("Final Answer: fals", "False", "Fact Checking", ["NO"], 0.8, 0.0),  # ANLS vs exact
        ("Final Answer: b", "b", "Multi Choice", ["NO"], 1.0, 1.0),
        ("I cannot read the chart.", "24%", "Hypothetical", ["NO"], 0.0, 0.0),
        ("Final Answer: Asia", "Asia", "Conversational", ["NO"], 1.0, 1.0),
    ],
)
def test_chartqapro_score_on_messy_outputs(response, target, qtype, flags, robust, paper):
    sample = chart_sample(target, qtype, flags)
    got = chartqapro.score(response, sample, "robust").metrics
    assert got["score"] == got["relaxed_accuracy"] == pytest.approx(robust)
    assert chartqapro.score(response, sample, "paper").metrics["score"] == pytest.approx(paper)
    assert got["formatted"] == float("Final Answer" in response)
    whole = chartqapro.score(response, sample).metrics  # official: the whole reply
    assert whole["relaxed_accuracy"] <= 1.0 and "formatted" not in whole
    with pytest.raises(ValueError, match="no profile"):
        chartqapro.score(response, sample, "lmms_eval")


def test_chartqapro_loads_jsonl(tmp_path):
    root = stage("chartqapro", tmp_path, DOC_FIXTURES)
    for i, name in enumerate(("chart_bar", "chart_line", "chart_pie")):
        place_image(root, f"images/{name}.png", (40 * i, 90, 200))
    result = chartqapro.load(root)
    assert [s.id for s in result.samples] == ["0", "1", "2", "3", "4", "5", "6"]
    assert problems(result) == {
        "7": "missing field(s) Answer",
        "8": "Year flags are empty",
        "9": "the last Answer is blank",
        "line 11": problems(result)["line 11"],
    }
    assert problems(result)["line 11"].startswith("not JSON")
    assert result.missing_media == [str(root / "images" / "not_downloaded.png")]
    assert result.notes["format"] == "jsonl"
    by_id = {s.id: s for s in result.samples}
    assert by_id["0"].media == str(root / "images" / "chart_bar.png")
    assert by_id["0"].cluster == by_id["1"].cluster == "chart_bar.png"
    assert by_id["1"].extra["year_flags"] == ["YES"]
    conv = by_id["3"]
    assert conv.target == "Asia" and conv.question == "Which of them is larger?"
    assert conv.extra["year_flags"] == ["NO"]  # the last flag only
    assert "Conversation:\nQ: Which two regions exceed 40%?\nA: [Asia, Europe]" in conv.prompt
    fact = by_id["4"]
    assert fact.prompt.startswith("Energy mix of the country in 2020")
    assert "true or false" in fact.prompt
    assert "letters only" in by_id["2"].prompt
    for sample in result.samples:
        assert sample.kind == "open_ended"
        assert sample.prompt.endswith(documents.ANSWER_FORMAT)
        assert sample_from_json(json.loads(json.dumps(sample_to_json(sample)))) == sample
    assert {s.categories["question_type"] for s in result.samples} == {
        "Factoid",
        "Multi Choice",
        "Conversational",
        "Fact Checking",
        "Hypothetical",
    }


def test_chartqapro_loads_hf_parquet_and_extracts_images_once(tmp_path):
    red, blue = image_bytes((255, 0, 0)), image_bytes((0, 0, 255), "JPEG")
    row = {
        "Question": ["What is the peak?"],
        "Answer": ["42"],
        "Question Type": "Factoid",
        "Year": ["NO"],
        "Paragraph": "",
    }
    rows = [
        {**row, "image": {"bytes": red, "path": None}},
        {**row, "image": {"bytes": red, "path": None}, "Answer": ["43"]},
        {**row, "image": {"bytes": blue, "path": "chart.jpg"}},
        {**row, "image": {"bytes": None, "path": None}},
    ]
    write_parquet(tmp_path / "data" / "test-00000-of-00001.parquet", rows)
    result = chartqapro.load(tmp_path)
    assert [s.id for s in result.samples] == ["0", "1", "2"]
    assert list(problems(result)) == ["3"] and "no path or bytes" in problems(result)["3"]
    assert result.missing_media == [] and result.notes["format"] == "parquet"
    first, second, third = result.samples
    assert first.media == second.media and first.cluster == second.cluster
    assert Path(first.media).suffix == ".png" and Path(third.media).suffix == ".jpg"
    assert Path(first.media).read_bytes() == red
    assert Path(first.media).parent == tmp_path / "extracted_images"
    again = chartqapro.load(tmp_path)  # reuses the written files
    assert [s.media for s in again.samples] == [s.media for s in result.samples]


def test_chartqapro_missing_annotations_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no annotations"):
        chartqapro.load(tmp_path)
