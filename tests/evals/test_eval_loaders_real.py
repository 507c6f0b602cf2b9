"""LVBench and MMVU as users download them: the official LVBench jsonl with video2dataset's
folders, and lmms-eval's parquet mirrors with their zips. Each fixture follows the published
layout and schema cited above its tests, with tiny real mp4 files."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from evals import video2dataset
from evals.tasks import lvbench, mmvu
from tests.support.downloads import files_under, place, write_parquet, write_zip

FIXTURES = Path(__file__).parents[1] / "fixtures" / "benchmarks"


# ----------------------------------------------------------------------------- LVBench
# video2dataset (iejMac/video2dataset@28e7d1c, video2dataset/data_writer.py FilesSampleWriter
# and workers/download_worker.py): `--output_format files` writes <folder>/<shard>/<key>.mp4,
# a <key>.json beside it with the input columns (url) plus key, status, error_message and
# yt_meta_dict, and <shard>.parquet / <shard>_stats.json beside the shard folder; a failed
# sample gets the json and no mp4. THUDM/LVBench@f998d95 scripts/download.sh runs it on
# https://www.youtube.com/watch?v=<key> lines (save_video_txt.py) into scripts/videos.


def sidecar(url: str, key: str, status: str = "success", error: str | None = None) -> str:
    meta = {"url": url, "key": key, "status": status, "error_message": error}
    return json.dumps({**meta, "yt_meta_dict": {}}, indent=4)


def video2dataset_folder(folder: Path, clip: bytes) -> None:
    """What download.sh leaves for the fixture's jsonl: sKAYQGR4dDE downloaded as 000000000,
    Cm73ma6Ibcs failed, plus an id the benchmark does not use and the shard's stats files."""
    shard = folder / "00000"
    shard.mkdir(parents=True)
    watch = "https://www.youtube.com/watch?v="
    (shard / "000000000.json").write_text(sidecar(watch + "sKAYQGR4dDE", "000000000"))
    (shard / "000000000.mp4").write_bytes(clip)
    failed = sidecar(
        watch + "Cm73ma6Ibcs", "000000001", "failed_to_download", "ERROR: Video unavailable"
    )
    (shard / "000000001.json").write_text(failed)
    (shard / "000000002.json").write_text(sidecar(watch + "notInLVBench", "000000002"))
    (shard / "000000002.mp4").write_bytes(clip)
    (folder / "00000_stats.json").write_text(json.dumps({"count": 3, "successes": 2}))
    (folder / "00000.parquet").write_bytes(b"PAR1")  # the shard table: not read


def lvbench_clone(tmp_path: Path) -> Path:
    """A git clone of THUDM/LVBench with data/video_info.meta.jsonl where its README says."""
    root = tmp_path / "LVBench"
    (root / "data").mkdir(parents=True)
    shutil.copy(FIXTURES / "lvbench" / "video_info.meta.jsonl", root / "data")
    return root


def test_youtube_id_reads_the_urls_download_sh_writes():
    assert video2dataset.youtube_id("https://www.youtube.com/watch?v=sKAYQGR4dDE") == "sKAYQGR4dDE"
    assert video2dataset.youtube_id("https://youtu.be/sKAYQGR4dDE?t=3") == "sKAYQGR4dDE"
    assert video2dataset.youtube_id("https://www.youtube.com/embed/sKAYQGR4dDE") == "sKAYQGR4dDE"
    assert video2dataset.youtube_id("https://example.com/watch?v=sKAYQGR4dDE") is None


def test_lvbench_finds_video2dataset_downloads_through_their_sidecars(tmp_path, clip):
    root = lvbench_clone(tmp_path)
    video2dataset_folder(root / "scripts" / "videos", clip)
    result = lvbench.load(root)
    by_id = {s.id: s for s in result.samples}
    shard = root / "scripts" / "videos" / "00000"
    assert by_id["1"].media == by_id["2"].media == str(shard / "000000000.mp4")
    assert by_id["4"].cluster == "Cm73ma6Ibcs"
    assert "video2dataset did not download it: ERROR: Video unavailable" in by_id["4"].media
    assert result.missing_media == [by_id["4"].media]
    assert result.notes["failed_downloads"] == {"Cm73ma6Ibcs": "ERROR: Video unavailable"}
    assert result.notes["video2dataset_sidecars"] == 3  # the stats file is not a sidecar


def test_lvbench_video2dataset_folder_as_media_dir_and_flat_files(tmp_path, clip):
    root = lvbench_clone(tmp_path)
    elsewhere = tmp_path / "cache" / "lvbench_videos"
    video2dataset_folder(elsewhere, clip)
    place(root, clip, "all_videos/Cm73ma6Ibcs.mp4")  # the flat <key>.mp4 layout
    result = lvbench.load(root, media_dir=elsewhere)
    by_id = {s.id: s for s in result.samples}
    assert by_id["1"].media == str(elsewhere / "00000" / "000000000.mp4")
    assert by_id["4"].media == str(root / "all_videos" / "Cm73ma6Ibcs.mp4")
    assert result.missing_media == [] and result.notes["failed_downloads"] == {}


# lmms-eval's mirror: lmms-eval@75571cf tasks/lvbench/lvbench.yaml (dataset_path
# lmms-eval/LVBench, formerly lmms-lab/LVBench; test_split train; cache_dir lvbench) and
# utils.py (reads doc["video_path"] under $HF_HOME/lvbench, doc["question"], doc["answer"],
# doc.get("options")). The repo holds data/train-00000-of-00001.parquet and
# video_chunks/videos_chunk_001.zip ... (https://huggingface.co/datasets/lmms-lab/LVBench/tree/main);
# each row flattens one jsonl qa entry with its video's key and type, and video_path is
# "<key>.mp4", a member at the top of a chunk zip.


def lvbench_rows() -> list[dict]:
    lines = (FIXTURES / "lvbench" / "video_info.meta.jsonl").read_text().splitlines()
    rows = []
    for video in (json.loads(line) for line in lines[:2]):
        for qa in video["qa"]:
            rows.append({"key": video["key"], "type": video["type"], **qa})
            rows[-1]["video_path"] = f"{video['key']}.mp4"
    return rows


def lvbench_schema():
    pa = pytest.importorskip("pyarrow")
    text = ("key", "type", "question", "answer", "time_reference", "video_path")
    return pa.schema(
        [("uid", pa.int64()), ("question_type", pa.list_(pa.string()))]
        + [(name, pa.string()) for name in text]
    )


def test_lvbench_lmms_eval_parquet_names_the_unextracted_zip(tmp_path, clip):
    snapshot = tmp_path / "snapshot"
    write_parquet(
        snapshot / "data" / "train-00000-of-00001.parquet", lvbench_rows(), lvbench_schema()
    )
    chunk = snapshot / "video_chunks" / "videos_chunk_001.zip"
    write_zip(chunk, {"sKAYQGR4dDE.mp4": clip, "Cm73ma6Ibcs.mp4": clip})
    before = files_under(snapshot)
    result = lvbench.load(snapshot)
    assert result.notes["format"] == "parquet"
    assert [s.id for s in result.samples] == ["1", "2", "4"]  # uid 3's answer E is an error
    assert list({e.record_id for e in result.errors}) == ["3"]
    assert len(result.missing_media) == 2
    assert all(f"(still zipped in {chunk}" in m for m in result.missing_media)
    assert files_under(snapshot) == before  # nothing was extracted into the snapshot

    cache = tmp_path / "hf_home" / "lvbench"  # where lmms-eval extracts the chunks
    with zipfile.ZipFile(chunk) as packed:
        packed.extractall(cache)
    result = lvbench.load(snapshot, media_dir=cache)
    second = result.samples[1]
    assert result.missing_media == []
    assert second.media == str(cache / "sKAYQGR4dDE.mp4")
    assert second.categories == {
        "question_type": ["reasoning", "event understanding"],
        "video_type": "cartoon",
    }
    assert (second.target, second.extra["time_reference"]) == ("B", "03:10-04:02")
    assert second.prompt.endswith(
        "(D) He hears a loud noise\nAnswer the question with the option letter."
    )


def test_lvbench_options_column_is_appended_as_lmms_eval_does(tmp_path, clip):
    pa = pytest.importorskip("pyarrow")
    row = {
        "key": "sKAYQGR4dDE",
        "type": "cartoon",
        "uid": 9,
        "question": "Which year?",
        "options": ["1636", "1366"],
        "answer": "A",
        "question_type": ["entity recognition"],
        "time_reference": "00:15-00:19",
        "video_path": "sKAYQGR4dDE.mp4",
    }
    schema = lvbench_schema().append(pa.field("options", pa.list_(pa.string())))
    write_parquet(tmp_path / "data" / "train-00000-of-00001.parquet", [row], schema)
    place(tmp_path, clip, "sKAYQGR4dDE.mp4")
    (sample,) = lvbench.load(tmp_path).samples
    assert (
        sample.prompt
        == "Which year?\n(A) 1636\n(B) 1366\nAnswer the question with the option letter."
    )
    assert sample.options == ("A. 1636", "B. 1366")
    assert sample.media == str(tmp_path / "sKAYQGR4dDE.mp4")


# ----------------------------------------------------------------------------- MMVU
# lmms-eval@75571cf tasks/mmvu/mmvu_val.yaml (dataset_path lmms-eval/MMVU, formerly
# lmms-lab/MMVU; split validation; cache_dir mmvu) and utils.py, which reads doc["video_path"]
# under $HF_HOME/mmvu, doc["id"], doc["question"], doc["choices"] (a dict A-E),
# doc["answer"], doc["question_type"]. The repo is data/ plus videos.zip
# (https://huggingface.co/datasets/lmms-lab/MMVU/tree/main). The rows are yale-nlp/MMVU@4d54223
# data/validation.json records validation_0 and validation_1 in those columns.

MMVU_ROWS = [
    {
        "id": "validation_0",
        "video_path": "videos/Art/0.mp4",
        "question_type": "open-ended",
        "question": "Which cinematic shooting technique is shown in the video?",
        "choices": {"A": "", "B": "", "C": "", "D": "", "E": ""},
        "answer": "Dolly Zoom",
    },
    {
        "id": "validation_1",
        "video_path": "videos/Chemistry/0.mp4",
        "question_type": "multiple-choice",
        "question": "Assume that 2.24 liters of gas fully participates in the reaction shown in "
        "the video, how many grams of precipitate are produced?",
        "choices": {"A": "10.0", "B": "5.0", "C": "12.0", "D": "15.0", "E": "20.0"},
        "answer": "A",
    },
]


def mmvu_schema():
    pa = pytest.importorskip("pyarrow")
    choices = pa.struct([(letter, pa.string()) for letter in "ABCDE"])
    text = ("id", "video_path", "question_type", "question", "answer")
    return pa.schema([(n, pa.string()) for n in text] + [("choices", choices)])


def test_mmvu_lmms_eval_parquet_and_videos_zip(tmp_path, clip):
    snapshot = tmp_path / "snapshot"
    write_parquet(snapshot / "data" / "validation-00000-of-00001.parquet", MMVU_ROWS, mmvu_schema())
    write_zip(snapshot / "videos.zip", {"videos/Art/0.mp4": clip, "videos/Chemistry/0.mp4": clip})
    result = mmvu.load(snapshot)
    assert result.notes["format"] == "parquet"
    art, chem = result.samples
    assert result.missing_media == [art.media, chem.media]
    zipped = f"still zipped in {snapshot / 'videos.zip'}: extract it and pass its folder"
    assert art.media == f"{snapshot / 'videos/Art/0.mp4'} ({zipped} as --media-dir)"

    cache = tmp_path / "hf_home" / "mmvu"
    with zipfile.ZipFile(snapshot / "videos.zip") as packed:
        packed.extractall(cache)
    art, chem = (result := mmvu.load(snapshot, media_dir=cache)).samples
    assert result.missing_media == [] and result.errors == []
    assert (art.media, chem.media) == (
        str(cache / "videos/Art/0.mp4"),
        str(cache / "videos/Chemistry/0.mp4"),
    )
    assert (art.kind, art.target, chem.kind, chem.target) == (
        "open_ended",
        "Dolly Zoom",
        "multiple_choice",
        "A",
    )
    assert chem.prompt.endswith(
        "\nA: 10.0\nB: 5.0\nC: 12.0\nD: 15.0\nE: 20.0\n\nDo not generate any intermediate "
        "reasoning process. Answer directly with the option letter from the given choices."
    )
    assert chem.categories == {
        "subject": "",
        "question_type": "multiple-choice",
    }  # no metadata column
