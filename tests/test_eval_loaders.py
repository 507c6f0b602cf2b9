"""Benchmark loaders on small fixtures in the real on-disk formats, with tiny real videos."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from evals.subtitles import NO_SUBTITLES, Cue, parse_srt, read_srt, subtitles_for_frames
from evals.tasks import charades, longvideobench, lvbench, mlvu, mmvu, videomme

FIXTURES = Path(__file__).parent / "fixtures" / "benchmarks"


@pytest.fixture(scope="session")
def clip(tmp_path_factory) -> bytes:
    """One tiny real mp4 (64x64, 2 s); every fixture video is a copy of it."""
    from agents.synthetic import make_video

    path = tmp_path_factory.mktemp("clip") / "clip.mp4"
    make_video(path, seed=3, duration=2.0, fps=4.0, width=64, height=64, n_needles=0)
    return path.read_bytes()


def stage(name: str, tmp_path: Path) -> Path:
    """A writable copy of a fixture folder."""
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def place(root: Path, clip: bytes, *relative: str) -> None:
    for rel in relative:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(clip)


def write_parquet(path: Path, rows: list[dict], schema=None) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def problems(result) -> dict[str, str]:
    return {err.record_id: err.problem for err in result.errors}


# ----------------------------------------------------------------------------- subtitles


def test_parse_srt_strips_font_tags_and_joins_lines():
    cues = read_srt(FIXTURES / "videomme" / "subtitle" / "fFjv93ACGo8.srt")
    assert cues == [
        Cue(0.0, 1.0, "Welcome to the kitchen."),
        Cue(1.0, 2.5, "Today we bake bread."),
        Cue(3.0, 4.0, "First, the flour."),
    ]
    assert read_srt(FIXTURES / "missing.srt") is None
    assert parse_srt("\ufeff1\n00:01:02.5 --> 01:00:00,040\nhi\n") == [Cue(62.5, 3600.04, "hi")]


@pytest.mark.parametrize(
    ("times", "fps", "expected"),
    [
        ([0.5, 2.0], None, "Welcome to the kitchen.\nToday we bake bread."),
        ([2.0, 0.5], None, "Welcome to the kitchen.\nToday we bake bread."),  # cue order kept
        ([1.0], None, "Today we bake bread."),  # [start, end): a cue ends where the next begins
        ([2.5, 2.9], None, ""),
        ([3.99], None, "First, the flour."),
        ([3.99], 1.0, ""),  # with fps: frame 4 is outside cue frames [3, 4)
    ],
)
def test_subtitles_for_frames(times, fps, expected):
    cues = read_srt(FIXTURES / "videomme" / "subtitle" / "fFjv93ACGo8.srt")
    assert subtitles_for_frames(cues, times, fps=fps) == expected
    assert subtitles_for_frames([c.to_dict() for c in cues], times, fps=fps) == expected


def test_missing_subtitle_file_reads_no_subtitles_available():
    assert subtitles_for_frames(None, [1.0]) == NO_SUBTITLES == "No subtitles available"


# ----------------------------------------------------------------------------- VideoMME

VIDEOMME_ROWS = [
    {"video_id": "001", "duration": "short", "domain": "Life Record", "sub_category": "Food",
     "url": "https://www.youtube.com/watch?v=fFjv93ACGo8", "videoID": "fFjv93ACGo8",
     "question_id": "001-1", "task_type": "Counting Problem",
     "question": "How many eggs are used?", "options": ["A. 1.", "B. 2.", "C. 3.", "D. 4."],
     "answer": "C"},
    {"video_id": "001", "duration": "short", "domain": "Life Record", "sub_category": "Food",
     "url": "https://www.youtube.com/watch?v=fFjv93ACGo8", "videoID": "fFjv93ACGo8",
     "question_id": "001-2", "task_type": "Object Recognition",
     "question": "What is baked?", "options": ["A. Bread.", "B. Cake.", "C. Pie.", "D. Pizza."],
     "answer": "A"},
    {"video_id": "002", "duration": "long", "domain": "Knowledge", "sub_category": "Astronomy",
     "url": "https://www.youtube.com/watch?v=-2PpQnAvzyk", "videoID": "-2PpQnAvzyk",
     "question_id": "002-1", "task_type": "Information Synopsis",
     "question": "What is the video about?",
     "options": ["A. Mars.", "B. Venus.", "C. Jupiter.", "D. Saturn."], "answer": "D"},
    {"video_id": "003", "duration": "medium", "domain": "Knowledge", "sub_category": "Law",
     "url": "", "videoID": "Zq3Fb4pXn0M", "question_id": "003-1", "task_type": "OCR Problems",
     "question": "Which law is cited?", "options": ["A. 1", "B. 2", "C. 3", "D. 4"],
     "answer": "E"},
    {"video_id": "003", "duration": "medium", "domain": "Knowledge", "sub_category": "Law",
     "url": "", "videoID": "Zq3Fb4pXn0M", "question_id": "003-2", "task_type": "OCR Problems",
     "question": None, "options": ["A. 1", "B. 2", "C. 3", "D. 4"], "answer": "A"},
]  # fmt: skip


@pytest.fixture
def videomme_dir(tmp_path) -> Path:
    root = stage("videomme", tmp_path)
    write_parquet(root / "videomme" / "test-00000-of-00001.parquet", VIDEOMME_ROWS)
    return root


@pytest.mark.parametrize("layout", ["data", "videos", "video", ""])
def test_videomme_loads_rows_and_finds_media_in_each_layout(videomme_dir, clip, layout):
    folder = f"{layout}/" if layout else ""
    place(videomme_dir, clip, f"{folder}fFjv93ACGo8.mp4", f"{folder}-2PpQnAvzyk.MP4")
    result = videomme.load(videomme_dir)
    assert [s.id for s in result.samples] == ["001-1", "001-2", "002-1"]
    assert result.missing_media == []
    first = result.samples[0]
    assert first.media == str(videomme_dir / folder / "fFjv93ACGo8.mp4")
    assert Path(result.samples[2].media).name == "-2PpQnAvzyk.MP4"
    assert first.prompt == (
        "Select the best answer to the following multiple-choice question based on the video. "
        "Respond with only the letter (A, B, C, or D) of the correct option.\n"
        "How many eggs are used?\nA. 1.\nB. 2.\nC. 3.\nD. 4.\nThe best answer is:"
    )
    assert (first.kind, first.target, first.cluster) == ("multiple_choice", "C", "fFjv93ACGo8")
    assert first.options == ("A. 1.", "B. 2.", "C. 3.", "D. 4.")
    assert first.categories == {
        "duration": "short",
        "domain": "Life Record",
        "sub_category": "Food",
        "task_type": "Counting Problem",
    }
    assert result.notes["format"] == "parquet"
    assert result.sources == [str(videomme_dir / "videomme" / "test-00000-of-00001.parquet")]


def test_videomme_reports_bad_rows_with_file_and_id(videomme_dir, clip):
    place(videomme_dir, clip, "data/fFjv93ACGo8.mp4", "data/-2PpQnAvzyk.mkv")
    result = videomme.load(videomme_dir)
    assert problems(result) == {
        "003-1": "answer 'E' is not one of A-D",
        "003-2": "missing field(s) question",
    }
    assert all(err.source == result.sources[0] for err in result.errors)
    assert "test-00000-of-00001.parquet: record '003-1'" in str(result.errors[0])


def test_videomme_reports_missing_media_up_front(videomme_dir, clip):
    place(videomme_dir, clip, "videos/fFjv93ACGo8.mp4")
    result = videomme.load(videomme_dir)
    assert len(result.samples) == 3  # samples with missing media are still returned
    expected = str(videomme_dir / "{data,videos,video,.}" / "-2PpQnAvzyk.mp4")
    assert result.missing_media == [expected]
    assert result.samples[2].media == expected


def test_videomme_subtitles_follow_the_sampled_frames(videomme_dir, clip):
    place(videomme_dir, clip, "data/fFjv93ACGo8.mp4", "data/-2PpQnAvzyk.mp4")
    result = videomme.load(videomme_dir, subtitles=True)
    first, third = result.samples[0], result.samples[2]
    assert first.extra["subtitle_path"] == str(videomme_dir / "subtitle" / "fFjv93ACGo8.srt")
    assert first.extra["subtitles"][1] == {"start": 1.0, "end": 2.5, "text": "Today we bake bread."}
    assert third.extra["subtitles"] is None
    assert result.notes["subtitles_missing"] == ["-2PpQnAvzyk"]
    assert videomme.prompt_with_subtitles(first, [0.5, 3.5]) == (
        "This video's subtitles are listed below:\n"
        "Welcome to the kitchen.\nFirst, the flour.\n"
        "Select the best answer to the following multiple-choice question based on the video "
        "and the subtitles. Respond with only the letter (A, B, C, or D) of the correct option.\n"
        "How many eggs are used?\nA. 1.\nB. 2.\nC. 3.\nD. 4.\nThe best answer is:"
    )
    assert "below:\nNo subtitles available\nSelect" in videomme.prompt_with_subtitles(third, [1.0])
    plain = videomme.load(videomme_dir)
    assert "subtitles" not in plain.samples[0].extra
    assert videomme.prompt_with_subtitles(plain.samples[0], [1.0]) == plain.samples[0].prompt


def test_parquet_without_pyarrow_says_how_to_install(videomme_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r"pip install paravt-graph\[evals\]"):
        videomme.load(videomme_dir)


# ----------------------------------------------------------------------------- MLVU

MLVU_VIDEOS = (
    "video/1_plotQA/movie101_66.mp4",
    "video/1_plotQA/shared_clip.mp4",
    "video/2_needle/needle_32.mp4",
    "video/4_count/shared_clip.mp4",
    "video/4_count/count_7.mp4",
)


def test_mlvu_json_answer_text_becomes_its_letter(tmp_path, clip):
    root = stage("mlvu", tmp_path)
    place(root, clip, *MLVU_VIDEOS)
    result = mlvu.load(root)
    assert result.notes["format"] == "json"
    by_id = {s.id: s for s in result.samples}
    assert list(by_id) == ["plotQA_0", "plotQA_1", "needle_0", "count_0", "count_1"]
    first = by_id["plotQA_0"]
    assert first.target == "C"
    assert first.prompt == (
        "Question: What color is the main male character in the video?\nOptions:\n"
        "(A) Yellow\n(B) Red\n(C) Green\n(D) Blue\nOnly give the best option."
    )
    assert first.options == ("A. Yellow", "B. Red", "C. Green", "D. Blue")
    assert first.categories == {"task": "plotQA"}
    assert first.extra["system_prompt"].startswith("Carefully watch this video")
    assert "Best" not in first.prompt  # the answer prefill is never in the prompt
    assert by_id["needle_0"].target == "A"
    assert (by_id["plotQA_1"].target, by_id["plotQA_1"].extra["ambiguous_gold"]) == (
        "C",
        ["B", "C"],
    )
    # the answer "6" is not a candidate: loaded, with qa_template's gold letter chr(ord("A") - 1)
    assert (by_id["count_1"].target, by_id["count_1"].options[0]) == ("@", "A. 1")
    assert [n["id"] for n in result.notes["irregular"]] == ["plotQA_1", "count_1"]
    assert result.missing_media == []


def test_mlvu_same_basename_resolves_to_its_own_task_folder(tmp_path, clip):
    root = stage("mlvu", tmp_path)
    place(root, clip, *MLVU_VIDEOS[:3], MLVU_VIDEOS[4])  # no 4_count/shared_clip.mp4
    by_id = {s.id: s for s in mlvu.load(root).samples}
    assert by_id["plotQA_1"].media == str(root / "video" / "1_plotQA" / "shared_clip.mp4")
    assert by_id["count_0"].media == str(root / "video" / "4_count" / "shared_clip.mp4")
    assert mlvu.load(root).missing_media == [str(root / "video" / "4_count" / "shared_clip.mp4")]


def test_mlvu_flat_layout_and_bad_records(tmp_path, clip):
    root = stage("mlvu", tmp_path)
    place(root, clip, "movie101_66.mp4", "needle_32.mp4", "shared_clip.mp4", "count_7.mp4")
    result = mlvu.load(root)
    assert result.missing_media == []
    assert problems(result) == {"count_2": "missing field(s) question"}  # KeyError officially
    assert result.errors[0].source == str(root / "json" / "4_count.json")


def test_mlvu_generation_tasks_only_on_request(tmp_path):
    root = stage("mlvu", tmp_path)
    assert "sub_scene" not in {s.categories["task"] for s in mlvu.load(root).samples}
    (sample,) = mlvu.load(root, tasks=["sub_scene"]).samples
    assert (sample.id, sample.kind) == ("sub_scene_0", "open_ended")
    assert sample.target == "The man opens the box and finds a letter."
    assert sample.extra["scoring_points"] == ["The man opens the box", "He finds a letter"]


MLVU_ROWS = [
    {"video_name": "movie101_66.mp4", "duration": 246.0, "task_type": "plotQA", "answer": "C",
     "question": "What color is the main male character in the video?\n"
                 "(A) Yellow\n(B) Red\n(C) Green\n(D) Blue"},
    {"video_name": "needle_32.mp4", "duration": 468.0, "task_type": "needle", "answer": "(B)",
     "question": "Question: What does the hand do?\nOptions:\n(A) Waves\n(B) Delivers a product"},
    {"video_name": "count_7.mp4", "duration": 300.0, "task_type": "count", "answer": "E",
     "question": "How many times?\n(A) 1\n(B) 2"},
    {"video_name": "subPlot_1.mp4", "duration": 600.0, "task_type": "subPlot", "answer": "x",
     "question": "Describe the scene."},
]  # fmt: skip


def test_mlvu_parquet_mirror_parses_embedded_options(tmp_path, clip):
    root = tmp_path / "mlvu_dev"
    write_parquet(root / "mlvu" / "test-00000-of-00001.parquet", MLVU_ROWS)
    place(root, clip, "movie101_66.mp4", "needle_32.mp4", "count_7.mp4")
    result = mlvu.load(root)
    assert result.notes["format"] == "parquet"
    assert [s.id for s in result.samples] == ["plotQA_0", "needle_0"]
    official = mlvu.build_prompt(
        "What color is the main male character in the video?", ["Yellow", "Red", "Green", "Blue"]
    )
    assert result.samples[0].prompt == official
    assert (result.samples[0].target, result.samples[1].target) == ("C", "B")
    assert result.samples[1].options == ("A. Waves", "B. Delivers a product")
    assert result.samples[1].question == "What does the hand do?"
    assert problems(result) == {"count_0": "answer 'E' is not an option letter"}


def test_mlvu_prefers_official_json_over_the_mirror(tmp_path):
    root = stage("mlvu", tmp_path)
    write_parquet(root / "mlvu" / "test-00000-of-00001.parquet", MLVU_ROWS)
    assert mlvu.load(root).notes["format"] == "json"


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
    row = {"video_id": rid[:5], "id": rid, "video_path": f"{rid[:5]}.mp4", "subtitle_path": "",
           "correct_choice": choice, "question": f"Question {rid}?", "duration": 20.0,
           "duration_group": 15, "question_category": "S2A", "topic_category": "KS-Knowledge",
           "starting_timestamp_for_subtitles": 0.0}  # fmt: skip
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
    {"video": "3MSZA.mp4", "caption": "a person is putting a book on a shelf",
     "timestamp": [0.0, 6.9]},
]  # fmt: skip


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
        {"start": 24.3, "end": 30.4},
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
    assert result.samples[0].extra == {"start": 24.296875, "end": 30.40625}
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


# ----------------------------------------------------------------------------- all loaders


@pytest.mark.parametrize("task", [videomme, mlvu, longvideobench, lvbench, charades, mmvu])
def test_missing_annotations_is_a_clear_error(tmp_path, task):
    with pytest.raises(FileNotFoundError, match="annotations under"):
        task.load(tmp_path)
