"""Records the references read although they look malformed: MLVU's official irregular
multiple-choice records and SlideVQA's null answers, loaded exactly as each harness reads them
(sources cited above each test)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evals.tasks import mlvu, slidevqa
from tests.support.downloads import place, png, write_parquet

FIXTURES = Path(__file__).parents[1] / "fixtures" / "benchmarks"


# ----------------------------------------------------------------------------- MLVU
# Real records of JUNJIE99/MLVU@fd060c1 data/*.json (fixtures/benchmarks/mlvu_official/README.md
# maps fixture index to official index). The reference is choice_bench.py qa_template: gold is
# the LAST candidate equal to the answer; none equal leaves answer_idx -1, so chr(ord("A") - 1).


def test_mlvu_official_irregular_records_load_as_qa_template_reads_them(tmp_path):
    root = Path(shutil.copytree(FIXTURES / "mlvu_official", tmp_path / "MLVU"))
    result = mlvu.load(root)
    assert result.errors == []
    by_id = {s.id: s for s in result.samples}
    assert len(by_id) == 11
    targets = {sid: s.target for sid, s in by_id.items()}
    assert targets == {
        "plotQA_0": "A",
        "plotQA_1": "B",
        "plotQA_2": "C",  # official 0, 23, 335
        "needle_0": "A",
        "needle_1": "@",
        "needle_2": "@",  # official 0, 34, 338
        "ego_0": "A",
        "ego_1": "C",
        "ego_2": "D",  # official 0, 119, 313
        "topic_reasoning_0": "A",
        "topic_reasoning_1": "D",  # official 0, 26
    }
    assert by_id["ego_1"].options == (
        "A. In the garage",
        "B. In the toolbox",
        "C. ",
        "D. On the shelf",
    )
    blank = by_id["topic_reasoning_1"]
    assert blank.question == "" and blank.options == ("A. ", "B. ", "C. ", "D. ")
    assert blank.prompt == "Question: \nOptions:\n(A) \n(B) \n(C) \n(D)\nOnly give the best option."
    irregular = {n["id"]: n["reason"] for n in result.notes["irregular"]}
    assert set(irregular) == {
        "plotQA_2",
        "needle_1",
        "needle_2",
        "ego_1",
        "ego_2",
        "topic_reasoning_1",
    }
    assert "is not among the candidates" in irregular["needle_1"]
    assert irregular["ego_1"] == "answer is blank and matches blank candidate C"
    assert irregular["topic_reasoning_1"].startswith(
        "question is blank; answer matches candidates A"
    )
    assert by_id["plotQA_1"].options[0] == "A. "  # blank candidates stay options
    assert all(s.extra["irregular"] == irregular[s.id] for s in result.samples if s.id in irregular)


def test_mlvu_hf_release_nests_json_and_videos_under_mlvu(tmp_path, clip):
    snapshot = tmp_path / "MVLU"  # HF MLVU/MVLU: MLVU/json/<N>_<task>.json, MLVU/video/<N>_<task>/
    shutil.copytree(FIXTURES / "mlvu_official" / "json", snapshot / "MLVU" / "json")
    place(snapshot, clip, "MLVU/video/2_needle/needle_4.mp4")
    result = mlvu.load(snapshot, tasks=["needle"])
    assert result.notes["format"] == "json"
    assert result.samples[1].media == str(snapshot / "MLVU" / "video" / "2_needle" / "needle_4.mp4")
    assert result.missing_media == [
        str(snapshot / "MLVU" / "video" / "2_needle" / n) for n in ("needle_32.mp4", "needle_5.mp4")
    ]


# ----------------------------------------------------------------------------- SlideVQA
# HF NTT-hil-insight/SlideVQA (https://huggingface.co/datasets/NTT-hil-insight/SlideVQA):
# qa_id, question, answer (nullable), evidence_pages, deck_name, page_1..page_20 images.
# lmms-eval@75571cf tasks/slidevqa/utils.py normalize_answer reads a None or NaN answer as
# "not answerable"; the official nttmdlab-nlp/SlideVQA@e1f0bd9 evaluate.py has no null case.


def test_slidevqa_null_answer_is_not_answerable(tmp_path):
    pa = pytest.importorskip("pyarrow")
    image = {"bytes": png(), "path": None}  # a tiny real PNG, as HF stores an Image feature
    page = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    fields = [
        ("qa_id", pa.int64()),
        ("question", pa.string()),
        ("answer", pa.string()),
        ("evidence_pages", pa.list_(pa.int64())),
        ("deck_name", pa.string()),
    ]
    schema = pa.schema(fields + [(f"page_{n}", page) for n in range(1, 21)])
    base = {"deck_name": "deck-a", "evidence_pages": [1], "page_1": image}
    rows = [
        {**base, "qa_id": 1, "question": "Who is the CEO?", "answer": None},
        {**base, "qa_id": 2, "question": "How many offices?", "answer": "4"},
        {**base, "qa_id": 3, "question": "Which year?", "answer": ""},
    ]
    write_parquet(tmp_path / "data" / "test-00000-of-00001.parquet", rows, schema)
    result = slidevqa.load(tmp_path, decks=False)
    null, four = result.samples
    assert (null.target, null.extra["null_answer"]) == ("not answerable", True)
    assert four.target == "4" and "null_answer" not in four.extra
    assert result.notes["null_answers"] == ["1"]
    assert {e.record_id: e.problem for e in result.errors} == {"3": "missing field(s) answer"}


def test_slidevqa_jsonl_null_and_missing_answers(tmp_path):
    rows = [
        {"qa_id": 5, "question": "Q?", "answer": None, "deck_name": "d", "page_1": "d/1.png"},
        {"qa_id": 6, "question": "Q?", "deck_name": "d", "page_1": "d/1.png"},
    ]
    (tmp_path / "test.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = slidevqa.load(tmp_path, decks=False)
    assert [s.target for s in result.samples] == ["not answerable"] * 2
    assert result.notes["null_answers"] == ["5", "6"]
