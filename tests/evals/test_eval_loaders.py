"""Benchmark loaders on small fixtures in the real on-disk formats, with tiny real videos:
VideoMME, MLVU, and what every loader shares."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evals.tasks import charades, longvideobench, lvbench, mlvu, mmvu, videomme
from tests.support.downloads import place, problems, stage, write_parquet

# ----------------------------------------------------------------------------- VideoMME

VIDEOMME_ROWS = [
    {
        "video_id": "001",
        "duration": "short",
        "domain": "Life Record",
        "sub_category": "Food",
        "url": "https://www.youtube.com/watch?v=fFjv93ACGo8",
        "videoID": "fFjv93ACGo8",
        "question_id": "001-1",
        "task_type": "Counting Problem",
        "question": "How many eggs are used?",
        "options": ["A. 1.", "B. 2.", "C. 3.", "D. 4."],
        "answer": "C",
    },
    {
        "video_id": "001",
        "duration": "short",
        "domain": "Life Record",
        "sub_category": "Food",
        "url": "https://www.youtube.com/watch?v=fFjv93ACGo8",
        "videoID": "fFjv93ACGo8",
        "question_id": "001-2",
        "task_type": "Object Recognition",
        "question": "What is baked?",
        "options": ["A. Bread.", "B. Cake.", "C. Pie.", "D. Pizza."],
        "answer": "A",
    },
    {
        "video_id": "002",
        "duration": "long",
        "domain": "Knowledge",
        "sub_category": "Astronomy",
        "url": "https://www.youtube.com/watch?v=-2PpQnAvzyk",
        "videoID": "-2PpQnAvzyk",
        "question_id": "002-1",
        "task_type": "Information Synopsis",
        "question": "What is the video about?",
        "options": ["A. Mars.", "B. Venus.", "C. Jupiter.", "D. Saturn."],
        "answer": "D",
    },
    {
        "video_id": "003",
        "duration": "medium",
        "domain": "Knowledge",
        "sub_category": "Law",
        "url": "",
        "videoID": "Zq3Fb4pXn0M",
        "question_id": "003-1",
        "task_type": "OCR Problems",
        "question": "Which law is cited?",
        "options": ["A. 1", "B. 2", "C. 3", "D. 4"],
        "answer": "E",
    },
    {
        "video_id": "003",
        "duration": "medium",
        "domain": "Knowledge",
        "sub_category": "Law",
        "url": "",
        "videoID": "Zq3Fb4pXn0M",
        "question_id": "003-2",
        "task_type": "OCR Problems",
        "question": None,
        "options": ["A. 1", "B. 2", "C. 3", "D. 4"],
        "answer": "A",
    },
]


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
    {
        "video_name": "movie101_66.mp4",
        "duration": 246.0,
        "task_type": "plotQA",
        "answer": "C",
        "question": "What color is the main male character in the video?\n"
        "(A) Yellow\n(B) Red\n(C) Green\n(D) Blue",
    },
    {
        "video_name": "needle_32.mp4",
        "duration": 468.0,
        "task_type": "needle",
        "answer": "(B)",
        "question": "Question: What does the hand do?\nOptions:\n(A) Waves\n(B) Delivers a product",
    },
    {
        "video_name": "count_7.mp4",
        "duration": 300.0,
        "task_type": "count",
        "answer": "E",
        "question": "How many times?\n(A) 1\n(B) 2",
    },
    {
        "video_name": "subPlot_1.mp4",
        "duration": 600.0,
        "task_type": "subPlot",
        "answer": "x",
        "question": "Describe the scene.",
    },
]


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


# ----------------------------------------------------------------------------- all loaders


@pytest.mark.parametrize("task", [videomme, mlvu, longvideobench, lvbench, charades, mmvu])
def test_missing_annotations_is_a_clear_error(tmp_path, task):
    with pytest.raises(FileNotFoundError, match="annotations under"):
        task.load(tmp_path)
