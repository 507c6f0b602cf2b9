"""``--media-dir``: one more folder, searched first, for media kept apart from the annotations
(an HF snapshot of annotations, videos extracted where lmms-eval puts them). Every loader
takes it; MediaIndex names the zip a missing file is still packed in."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

from evals.cli import _loader_options, add_eval_commands
from evals.media import MediaIndex
from evals.spec import EvalSpec
from evals.tasks import (
    charades,
    chartqapro,
    longvideobench,
    lvbench,
    mlvu,
    mmvu,
    needle,
    slidevqa,
    videomme,
    vqaonline,
)
from tests.support.downloads import place, png, write_parquet, write_zip

TESTS = Path(__file__).parents[1]
VIDEOMME_ROW = {
    "video_id": "001",
    "duration": "short",
    "domain": "Life Record",
    "sub_category": "Food",
    "url": "https://www.youtube.com/watch?v=fFjv93ACGo8",
    "videoID": "fFjv93ACGo8",
    "question_id": "001-1",
    "task_type": "Counting Problem",
    "question": "How many eggs?",
    "options": ["A. 1.", "B. 2.", "C. 3.", "D. 4."],
    "answer": "C",
}
SLIDES = "images/test/cloud-strategy-2019/cloud-strategy-2019-{}-1024.jpg"


def videomme_dir(tmp_path: Path) -> Path:
    write_parquet(tmp_path / "videomme" / "test-00000-of-00001.parquet", [VIDEOMME_ROW])
    return tmp_path


def copy_of(fixture: str):
    return lambda tmp_path: Path(shutil.copytree(TESTS / "fixtures" / fixture, tmp_path / "d"))


# task, its annotations in a data dir, the media files it reads (relative), load options
CASES = [
    (videomme, videomme_dir, ["data/fFjv93ACGo8.mp4"], {}),
    (
        longvideobench,
        copy_of("benchmarks/longvideobench"),
        ["videos/86CxyhFV9MI.mp4", "videos/cDrg-w0TiDM.mp4"],
        {},
    ),
    (
        lvbench,
        copy_of("benchmarks/lvbench"),
        ["all_videos/sKAYQGR4dDE.mp4", "all_videos/Cm73ma6Ibcs.mp4"],
        {},
    ),
    (
        charades,
        copy_of("benchmarks/charades"),
        ["Charades_v1_480/3MSZA.mp4", "Charades_v1_480/8LLYK.mp4"],
        {},
    ),
    (mmvu, copy_of("benchmarks/mmvu"), ["videos/Art/0.mp4", "videos/Chemistry/0.mp4"], {}),
    (
        mlvu,
        copy_of("benchmarks/mlvu"),
        [
            "video/1_plotQA/movie101_66.mp4",
            "video/1_plotQA/shared_clip.mp4",
            "video/2_needle/needle_32.mp4",
            "video/4_count/shared_clip.mp4",
        ],
        {},
    ),
    (
        chartqapro,
        copy_of("doc_benchmarks/chartqapro"),
        ["images/chart_bar.png", "images/chart_line.png", "images/chart_pie.png"],
        {},
    ),
    (vqaonline, copy_of("doc_benchmarks/vqaonline"), ["fruit_uyuni.png", "plant_morocco.png"], {}),
    (
        slidevqa,
        copy_of("doc_benchmarks/slidevqa"),
        [SLIDES.format(n) for n in (1, 2, 3)],
        {"decks": False},
    ),
]


@pytest.mark.parametrize(
    ("task", "annotations", "media", "options"), CASES, ids=[c[0].TASK.name for c in CASES]
)
def test_every_loader_finds_its_media_in_the_media_dir(
    tmp_path, clip, task, annotations, media, options
):
    data = annotations(tmp_path / "beside")
    content = clip if media[0].endswith(".mp4") else png()
    place(data, content, *media)
    beside = task.load(data, **options)  # the media beside the annotations: the reference

    apart = annotations(tmp_path / "apart")
    cache = tmp_path / "cache"
    place(cache, content, *media)
    result = task.load(apart, media_dir=cache, **options)
    assert len(result.samples) == len(beside.samples)
    assert len(result.missing_media) == len(beside.missing_media)
    found = [s.media for s in result.samples if s.media not in result.missing_media]
    assert found and all(Path(m).is_relative_to(cache) for m in found)
    assert len(task.load(apart, **options).missing_media) > len(beside.missing_media)


def test_videomme_subtitles_come_from_the_media_dir_too(tmp_path, clip):
    cache = tmp_path / "hf_home" / "videomme"  # where lmms-eval extracts subtitle.zip
    srt = TESTS / "fixtures" / "benchmarks" / "videomme" / "subtitle" / "fFjv93ACGo8.srt"
    place(cache, srt.read_bytes(), "subtitle/fFjv93ACGo8.srt")
    place(cache, clip, "data/fFjv93ACGo8.mp4")
    (sample,) = videomme.load(videomme_dir(tmp_path), subtitles=True, media_dir=cache).samples
    assert sample.extra["subtitle_path"] == str(cache / "subtitle" / "fFjv93ACGo8.srt")
    assert sample.extra["subtitles"][0]["text"] == "Welcome to the kitchen."


def test_needle_generates_its_videos_and_refuses_a_media_dir(tmp_path):
    with pytest.raises(ValueError, match="--media-dir does not apply"):
        needle.load(tmp_path, n_videos=1, media_dir=tmp_path)


def test_eval_run_passes_media_dir_as_a_loader_option_only_when_given(tmp_path):
    parser = argparse.ArgumentParser()
    add_eval_commands(parser.add_subparsers())
    base = ["eval", "run", "--task", "lvbench", "--data-dir", str(tmp_path)]
    with_media = parser.parse_args([*base, "--media-dir", "videos", "--option", "a=1"])
    assert _loader_options(with_media) == {"a": 1, "media_dir": str(Path("videos").resolve())}
    without = parser.parse_args(base)
    assert _loader_options(without) == {}
    study = ["eval", "study", "--task", "mmvu", "--data-dir", "x", "--media-dir", "m"]
    study = parser.parse_args(study)
    assert _loader_options(study) == {"media_dir": str(Path("m").resolve())}

    def spec(options):
        return EvalSpec(task="lvbench", data_dir="/d", model="m", context={}, options=options)

    assert spec({}).hash != spec({"media_dir": "/videos"}).hash  # another media dir, another run


# ----------------------------------------------------------------------------- MediaIndex


def test_media_dir_is_searched_first_and_must_exist(tmp_path, clip):
    data, media = tmp_path / "data_dir", tmp_path / "media"
    place(data, clip, "videos/a.mp4")
    place(media, clip, "deep/folder/a.mp4", "deep/b.mkv")
    index = MediaIndex(data, media_dir=media)
    assert index.roots == (media, data)
    assert index.find("a.mp4") == media / "deep" / "folder" / "a.mp4"
    assert index.find("b") == media / "deep" / "b.mkv"
    assert index.locate("a.mp4", ("videos",)) == data / "videos" / "a.mp4"
    assert MediaIndex(data).find("a.mp4") == data / "videos" / "a.mp4"
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        MediaIndex(data, media_dir=tmp_path / "nowhere")


def test_expected_names_the_zip_that_still_holds_a_file(tmp_path, clip):
    write_zip(tmp_path / "videos_chunked_01.zip", {"data/abc.mp4": clip})
    (tmp_path / "broken.zip").write_bytes(b"PK not a zip")  # a partial download is skipped
    index = MediaIndex(tmp_path)
    assert index.archive_holding("abc.mp4") == tmp_path / "videos_chunked_01.zip"
    assert index.archive_holding("bc.mp4") is None  # whole path components only
    assert index.expected("abc.mp4") == (
        f"{tmp_path / '{data,videos,video,.}' / 'abc.mp4'} (still zipped in "
        f"{tmp_path / 'videos_chunked_01.zip'}: extract it and pass its folder as --media-dir)"
    )
    assert index.expected("zzz.mp4") == str(tmp_path / "{data,videos,video,.}" / "zzz.mp4")
