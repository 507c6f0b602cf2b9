"""LongVideoBench, LVBench, Charades-STA and MMVU loaders on small fixtures in the real
on-disk formats, with tiny real videos."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.tasks import charades, longvideobench, lvbench, mmvu
from tests.support.downloads import FIXTURES, place, problems, stage, write_parquet

# ----------------------------------------------------------------------------- LongVideoBench


def test_longvideobench_json(tmp_path, clip):
    root = stage("longvideobench", tmp_path)
    place(root, clip, "videos/86CxyhFV9MI.mp4", "videos/cDrg-w0TiDM.mp4")
    result = longvideobench.load(root)
    assert result.notes["format"] == "json"
    first, second = result.samples
    assert (first.id, first.target, second.target) == ("86CxyhFV9MI_0", "B", "D")
    assert first.prompt == (
        "In the video, which subtitles appear at the same time as the man with black hair on "
        "stage?\nA. promisc has come to\nB. tonight\nC. an hour\nD. the stage\nE. nobody\n"
        "Answer with the option's letter from the given choices directly."
    )
    assert len(second.options) == 4
    assert first.categories == {
        "duration_group": "600",
        "question_category": "TOS",
        "topic_category": "NP-News-Programs",
    }
    assert second.cluster == "cDrg-w0TiDM"
    assert problems(result) == {"cDrg-w0TiDM_2": "correct_choice 7 is out of range for 4 options"}
    assert result.missing_media == []


def _lvb_row(rid: str, options: list[str], choice) -> dict:
    row = {
        "video_id": rid[:5],
        "id": rid,
        "video_path": f"{rid[:5]}.mp4",
        "subtitle_path": "",
        "correct_choice": choice,
        "question": f"Question {rid}?",
        "duration": 20.0,
        "duration_group": 15,
        "question_category": "S2A",
        "topic_category": "KS-Knowledge",
        "starting_timestamp_for_subtitles": 0.0,
    }
    row.update({f"option{i}": text for i, text in enumerate(options)})
    return row


def test_longvideobench_parquet_drops_unused_options(tmp_path, clip):
    root = tmp_path / "lvb"
    rows = [
        _lvb_row("aaaaa_0", ["red", "green", "blue", "pink", "N/A"], 2),
        _lvb_row("bbbbb_0", ["yes", "no", "maybe", "N/A", "N/A"], 0),
        _lvb_row("ccccc_0", ["one", "N/A", "three", "four", "N/A"], 0),
    ]
    write_parquet(root / "validation-00000-of-00001.parquet", rows)
    place(root, clip, "videos/aaaaa.mp4", "videos/bbbbb.mp4", "videos/ccccc.mp4")
    result = longvideobench.load(root)
    assert result.notes["format"] == "parquet"
    assert [s.options for s in result.samples] == [
        ("A. red", "B. green", "C. blue", "D. pink"),
        ("A. yes", "B. no", "C. maybe"),
    ]
    assert [s.target for s in result.samples] == ["C", "A"]
    assert result.samples[1].prompt.endswith(
        "C. maybe\nAnswer with the option's letter from the given choices directly."
    )
    assert list(problems(result)) == ["ccccc_0"]
    (root / "lvb_val.json").write_text((FIXTURES / "longvideobench" / "lvb_val.json").read_text())
    assert longvideobench.load(root).notes["format"] == "json"


# ----------------------------------------------------------------------------- LVBench


def test_lvbench_jsonl_keeps_question_types_as_lists(tmp_path, clip):
    root = stage("lvbench", tmp_path)
    place(root, clip, "all_videos/sKAYQGR4dDE.mp4", "all_videos/Cm73ma6Ibcs.mp4")
    result = lvbench.load(root)
    assert [s.id for s in result.samples] == ["1", "2", "4"]
    second = result.samples[1]
    assert second.categories == {
        "question_type": ["reasoning", "event understanding"],
        "video_type": "cartoon",
    }
    assert second.target == "B"
    assert second.options[1] == "B. He wants to find his father"
    assert second.prompt == (
        "Why does the boy run away from the house?\n(A) He is scared of the dog\n"
        "(B) He wants to find his father\n(C) He is late for school\n(D) He hears a loud noise\n"
        "Answer the question with the option letter."
    )
    assert (second.cluster, second.extra["time_reference"]) == ("sKAYQGR4dDE", "03:10-04:02")
    assert problems(result) == {
        "3": "answer 'E' is not one of A, B, C, D",
        "line 3": problems(result)["line 3"],
    }
    assert problems(result)["line 3"].startswith("not valid JSON")
    assert result.missing_media == []


def test_lvbench_missing_video(tmp_path, clip):
    root = stage("lvbench", tmp_path)
    place(root, clip, "videos/sKAYQGR4dDE.mp4")
    result = lvbench.load(root)
    folders = "{all_videos,scripts/videos,data,videos,video,.}"
    assert result.missing_media == [str(root / folders / "Cm73ma6Ibcs.mp4")]


# ----------------------------------------------------------------------------- Charades-STA

CHARADES_ROWS = [
    {"video": "3MSZA.mp4", "caption": "person turn a light on", "timestamp": [24.3, 30.4]},
    {
        "video": "3MSZA.mp4",
        "caption": "a person is putting a book on a shelf",
        "timestamp": [0.0, 6.9],
    },
]


def _charades_parquet(path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    schema = pa.schema(
        [("video", pa.string()), ("caption", pa.string()), ("timestamp", pa.list_(pa.float16()))]
    )
    import numpy as np

    rows = [{**r, "timestamp": np.array(r["timestamp"], np.float16)} for r in CHARADES_ROWS]
    write_parquet(path, rows, schema=schema)


def test_charades_text_file(tmp_path, clip):
    root = stage("charades", tmp_path)
    place(root, clip, "Charades_v1_480/3MSZA.mp4", "Charades_v1_480/8LLYK.mp4")
    result = charades.load(root)
    assert result.notes["format"] == "text"
    assert [s.id for s in result.samples] == ["3MSZA_0", "3MSZA_1", "8LLYK_4"]
    first = result.samples[0]
    assert (first.kind, first.target, first.extra) == (
        "grounding",
        "24.3-30.4",
        {"start": 24.3, "end": 30.4, "caption": "person turn a light on."},
    )
    assert first.question == "person turn a light on."
    assert first.prompt == (
        'Find the moment in the video when this event happens: "person turn a light on". '
        'Answer with its start and end time in seconds, as "start - end".'
    )
    assert first.categories == {}
    assert first.media == str(root / "Charades_v1_480" / "3MSZA.mp4")
    assert problems(result) == {
        "AO8RW_2": "start 12.0 is not before end 5.5",
        "AO8RW_3": "expected 'VIDEOID START END##sentence', "
        "got 'AO8RW 0.0 4.2 person opens the fridge.'",
    }
    assert result.missing_media == []
    lmms = charades.load(root, prompt="lmms_eval").samples[0].prompt
    assert lmms.endswith(
        "sentence: person turn a light on. Please return its start time and end time."
    )


def test_charades_prefers_text_over_float16_parquet(tmp_path, clip):
    root = stage("charades", tmp_path)
    _charades_parquet(root / "data" / "test-00000-of-00001.parquet")
    assert charades.load(root).notes["format"] == "text"
    (root / "charades_sta_test.txt").unlink()
    place(root, clip, "videos/3MSZA.mp4")
    result = charades.load(root)
    assert result.notes == {"format": "parquet", "timestamps": "float16", "prompt": "default"}
    assert result.samples[0].extra == {
        "start": 24.296875,
        "end": 30.40625,
        "caption": "person turn a light on",  # the row's caption as written
    }
    assert [s.id for s in result.samples] == ["3MSZA_0", "3MSZA_1"]
    assert result.samples[0].media == str(root / "videos" / "3MSZA.mp4")


def test_charades_missing_video_is_expected_in_charades_v1_480(tmp_path):
    root = stage("charades", tmp_path)
    result = charades.load(root)
    assert result.missing_media == [
        str(root / "Charades_v1_480" / f"{v}.mp4") for v in ("3MSZA", "8LLYK")
    ]


# ----------------------------------------------------------------------------- MMVU


def test_mmvu_both_kinds_and_subject_paths(tmp_path, clip):
    root = stage("mmvu", tmp_path)
    place(root, clip, "videos/Art/0.mp4", "videos/Chemistry/0.mp4")
    result = mmvu.load(root)
    art, chem, thermo = result.samples
    assert [s.id for s in result.samples] == ["validation_0", "validation_1", "validation_3"]
    assert (art.kind, art.target, art.options) == ("open_ended", "Dolly Zoom", ())
    assert art.prompt == (
        "Question: Which cinematic shooting technique is shown in the video?\n\n"
        "Do not generate any intermediate reasoning process. "
        "Directly output the final short answer."
    )
    assert art.media == str(root / "videos" / "Art" / "0.mp4")
    assert chem.media == str(root / "videos" / "Chemistry" / "0.mp4")  # same basename, own folder
    assert (chem.kind, chem.target) == ("multiple_choice", "A")
    assert chem.prompt.endswith(
        "\nA: 10.0\nB: 5.0\nC: 12.0\nD: 15.0\nE: 20.0\n\nDo not generate any intermediate "
        "reasoning process. Answer directly with the option letter from the given choices."
    )
    assert chem.categories == {"subject": "Chemistry", "question_type": "multiple-choice"}
    assert len(thermo.options) == 4  # the empty E is left out
    assert problems(result) == {"validation_2": "answer 'F' is not a non-empty choice A-E"}
    assert result.missing_media == [str(root / "videos" / "Thermodynamics" / "0.mp4")]
    assert "step by step" in mmvu.load(root, prompt="cot").samples[1].prompt
