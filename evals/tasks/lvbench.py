"""LVBench: load the official ``video_info.meta.jsonl`` or lmms-eval's parquet mirror.

Two on-disk formats, the jsonl first (``notes["format"]`` says which was read):

- ``jsonl``: github ``zai-org/LVBench`` (formerly ``THUDM/LVBench``) and its HF dataset ship
  only ``video_info.meta.jsonl`` (at the top or in ``data/``), one line per video
  ``{key, type, video_info, qa: [{uid, question, answer, question_type, time_reference}]}``.
- ``parquet``: HF ``lmms-eval/LVBench`` (formerly ``lmms-lab/LVBench``; the old name still
  resolves), ``data/train-00000-of-00001.parquet``, one row per question with ``key, type,
  uid, question, answer, question_type, time_reference, video_path``, videos in
  ``video_chunks/videos_chunk_NNN.zip`` as ``<key>.mp4``. An ``options`` list column, which
  lmms-eval@75571cf appends to the question as "(A) ..." lines, is read the same way.

Videos, by the YouTube id ``key``, first found wins, the ``media_dir`` folder before the data
dir: the row's ``video_path`` (lmms-eval reads ``$HF_HOME/lvbench/<video_path>``); a
video2dataset download (the official ``scripts/download.sh`` writes
``scripts/videos/00000/000000000.mp4`` with a ``.json`` sidecar holding the URL; see
evals.video2dataset); a file ``<key>.mp4`` under all_videos/, scripts/videos/, data/, videos/,
video/ or the top. Zips are never extracted (lmms-eval extracts them into its own cache, not
into the snapshot): a video still zipped is reported missing with its zip named.

The options are inside the question as "(A) ..." lines; the answer is a letter;
``question_type`` is a list (an item counts toward each of its categories), kept as a list in
``Sample.categories["question_type"]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from evals import video2dataset
from evals.formats import read_parquet
from evals.media import MEDIA_DIRS, MediaIndex
from evals.sample import RecordError, Sample
from evals.scorers.lvbench import DEFAULT, PROFILES, aggregate, score
from evals.tasks.base import LoadResult, Task

# ----------------------------------------------------------------------------- loading

POST_PROMPT = "Answer the question with the option letter."  # lmms-eval's instruction
MEDIA_SUBDIRS = ("all_videos", "scripts/videos", *MEDIA_DIRS)
PARQUET_PATTERNS = ("data/train-*.parquet", "train-*.parquet", "data/test-*.parquet")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_OPTION = re.compile(r"^\s*\(([A-Z])\)\s?(.*)$")


def inline_options(question: str) -> tuple[str, ...]:
    """The "(A) text" lines of a question as ("A. text", ...)."""
    found = [_OPTION.match(line) for line in question.split("\n")]
    return tuple(f"{m.group(1)}. {m.group(2).strip()}" for m in found if m)


def question_types(value) -> list[str]:
    """``question_type`` as a list: a list, a JSON list in a string, or one label."""
    if isinstance(value, str):
        if value.strip().startswith("["):
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError:
                parsed = None
            if isinstance(parsed, list):
                return [str(t) for t in parsed]
        return [value]
    return [str(t) for t in value]


def record_to_sample(record: dict, *, video: dict, source: str, media: str) -> Sample:
    """One ``qa`` entry of the video line ``video`` as a Sample; ``media``: its video path."""
    if not isinstance(record, dict):
        raise RecordError(source, "?", f"qa entry is not an object: {record!r}")
    rid = str(record.get("uid", "?"))
    missing = [
        f for f in ("uid", "question", "answer", "question_type") if record.get(f) in (None, "")
    ]
    if missing:
        raise RecordError(source, rid, f"missing field(s) {', '.join(missing)}")
    question = str(record["question"]).strip()
    options = inline_options(question)
    letters = "".join(o[0] for o in options)
    if len(options) < 2:
        raise RecordError(source, rid, "question has no '(A) ... (B) ...' option lines")
    if letters != LETTERS[: len(letters)]:
        found = ", ".join(letters)
        raise RecordError(source, rid, f"option lines are {found}, not (A), (B), ... in order")
    answer = str(record["answer"]).strip().strip("()")
    if answer not in letters:
        raise RecordError(
            source, rid, f"answer {record['answer']!r} is not one of {', '.join(letters)}"
        )
    key = str(video["key"])
    return Sample(
        id=rid,
        media=media,
        question=question,
        prompt=question + "\n" + POST_PROMPT,
        kind="multiple_choice",
        target=answer,
        options=options,
        cluster=key,
        categories={
            "question_type": question_types(record["question_type"]),
            "video_type": str(video.get("type") or ""),
        },
        extra={
            "raw_question": str(record["question"]),  # the release's text keeps its spacing
            "time_reference": record.get("time_reference"),
            "video_info": video.get("video_info"),
        },
    )


class VideoFinder:
    """Where each video is, by YouTube id (the search order is in the module docstring)."""

    def __init__(self, media: MediaIndex):
        self.media = media
        folders = [media.media_dir] if media.media_dir else []
        root = media.root
        folders += [root / sub for sub in MEDIA_SUBDIRS if sub]
        if root.is_dir():  # video2dataset run with the data dir as its output folder
            folders += [d for d in sorted(root.iterdir()) if d.is_dir() and d.name.isdigit()]
        self.downloads = video2dataset.scan(folders)

    def path(self, key: str, relative: str | None = None) -> str:
        found = self.media.locate(relative, MEDIA_SUBDIRS) if relative else None
        found = found or self.downloads.videos.get(key) or self.media.find(key)
        if found is not None:
            return str(found.resolve())
        where = self.media.expected(relative or f"{key}.mp4")
        if key in self.downloads.failed:
            where += f" (video2dataset did not download it: {self.downloads.failed[key]})"
        return where


def parquet_row_to_sample(row: dict, *, source: str, finder: VideoFinder) -> Sample:
    """One lmms-eval mirror row (one question) as a Sample."""
    relative = str(row.get("video_path") or "").strip() or None
    key = str(row.get("key") or "").strip() or (Path(relative).stem if relative else "")
    if not key:
        raise RecordError(source, str(row.get("uid", "?")), "missing field(s) key, video_path")
    question = row.get("question")
    options: Sequence[str] = row.get("options") or ()
    if options and question is not None:  # lmms-eval@75571cf lvbench_doc_to_text
        lines = (f"({LETTERS[i]}) {text}" for i, text in enumerate(options))
        question = str(question) + "\n" + "\n".join(lines)
    record = {**row, "question": question}
    video = {"key": key, "type": row.get("type"), "video_info": row.get("video_info")}
    return record_to_sample(record, video=video, source=source, media=finder.path(key, relative))


def parquet_files(data_dir: Path) -> list[Path]:
    """The mirror's parquet shards, from the first pattern that matches."""
    for pattern in PARQUET_PATTERNS:
        found = sorted(data_dir.glob(pattern))
        if found:
            return found
    return []


def annotation_file(data_dir: Path) -> Path | None:
    for path in (data_dir / "video_info.meta.jsonl", data_dir / "data" / "video_info.meta.jsonl"):
        if path.is_file():
            return path
    return None


def _jsonl_samples(path: Path, finder: VideoFinder, samples: list, errors: list) -> None:
    source = str(path)
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            video = json.loads(line)
        except json.JSONDecodeError as err:
            errors.append(RecordError(source, f"line {number}", f"not valid JSON: {err}"))
            continue
        if (
            not isinstance(video, dict)
            or not video.get("key")
            or not isinstance(video.get("qa"), list)
        ):
            errors.append(
                RecordError(source, f"line {number}", "a video line needs key and a qa list")
            )
            continue
        media = finder.path(str(video["key"]))
        for qa in video["qa"]:
            try:
                samples.append(record_to_sample(qa, video=video, source=source, media=media))
            except RecordError as err:
                errors.append(err)


def load(data_dir: Path, *, media_dir: str | Path | None = None) -> LoadResult:
    """Every question of every video; bad lines and items go to ``errors``."""
    data_dir = Path(data_dir).resolve()
    finder = VideoFinder(MediaIndex(data_dir, MEDIA_SUBDIRS, media_dir=media_dir))
    samples: list[Sample] = []
    errors: list[RecordError] = []
    jsonl = annotation_file(data_dir)
    if jsonl is not None:
        fmt, files = "jsonl", [jsonl]
        _jsonl_samples(jsonl, finder, samples, errors)
    else:
        fmt = "parquet"
        files = parquet_files(data_dir)
        if not files:
            raise FileNotFoundError(
                f"no LVBench annotations under {data_dir}: expected video_info.meta.jsonl "
                "(zai-org/LVBench) or data/train-*.parquet (lmms-eval/LVBench)"
            )
        for path in files:
            for row in read_parquet(path):
                try:
                    samples.append(parquet_row_to_sample(row, source=str(path), finder=finder))
                except RecordError as err:
                    errors.append(err)
    missing = list(dict.fromkeys(s.media for s in samples if not Path(s.media).is_file()))
    still_missing = {s.cluster for s in samples if s.media in missing}
    notes = {
        "format": fmt,
        "video2dataset_sidecars": finder.downloads.sidecars,
        "failed_downloads": {
            k: e for k, e in finder.downloads.failed.items() if k in still_missing
        },  # by YouTube id: video2dataset's error for each video still missing
    }
    return LoadResult(samples, errors, missing, [str(p) for p in files], notes)


TASK = Task(
    name="lvbench",
    load=load,
    score=score,
    aggregate=aggregate,
    profiles=PROFILES,
    default_profile=DEFAULT,
    category_fields=("question_type",),
    description=(
        "LVBench: multiple choice on hour-long videos, exact letter match over all items "
        "(robust extraction); per question type under the leaderboard codes."
    ),
)
