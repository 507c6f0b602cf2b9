"""LVBench: load ``video_info.meta.jsonl``, one line per video with its questions.

On disk (github zai-org/LVBench, HF ``zai-org/LVBench``)::

    <data_dir>/video_info.meta.jsonl       (or data/video_info.meta.jsonl)
    <data_dir>/{all_videos,data,videos,video,.}/<key>.mp4

A line is ``{key, type, video_info, qa: [{uid, question, answer, question_type,
time_reference}]}``. The options are inside the question as "(A) ..." lines; the answer is a
letter; ``question_type`` is a list (an item counts toward each of its categories), kept as a
list in ``Sample.categories["question_type"]``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from evals.media import MEDIA_DIRS, MediaIndex
from evals.sample import RecordError, Sample
from evals.scorers.lvbench import PROFILES, aggregate, score
from evals.tasks.base import LoadResult, Task

# ----------------------------------------------------------------------------- loading

POST_PROMPT = "Answer the question with the option letter."  # lmms-eval's instruction
MEDIA_SUBDIRS = ("all_videos", *MEDIA_DIRS)
_OPTION = re.compile(r"^\s*\(([A-Z])\)\s?(.*)$")


def inline_options(question: str) -> tuple[str, ...]:
    """The "(A) text" lines of a question as ("A. text", ...)."""
    found = [_OPTION.match(line) for line in question.split("\n")]
    return tuple(f"{m.group(1)}. {m.group(2).strip()}" for m in found if m)


def record_to_sample(record: dict, *, video: dict, source: str, media: MediaIndex) -> Sample:
    """One ``qa`` entry of the video line ``video`` as a Sample."""
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
    if len(options) < 2 or letters != "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: len(letters)]:
        raise RecordError(source, rid, "question has no '(A) ... (B) ...' option lines")
    answer = str(record["answer"]).strip().strip("()")
    if answer not in letters:
        raise RecordError(
            source, rid, f"answer {record['answer']!r} is not one of {', '.join(letters)}"
        )
    types = record["question_type"]
    types = [types] if isinstance(types, str) else [str(t) for t in types]
    key = str(video["key"])
    found = media.find(key)
    return Sample(
        id=rid,
        media=str(found.resolve()) if found else media.expected(f"{key}.mp4"),
        question=question,
        prompt=question + "\n" + POST_PROMPT,
        kind="multiple_choice",
        target=answer,
        options=options,
        cluster=key,
        categories={"question_type": types, "video_type": str(video.get("type", ""))},
        extra={
            "time_reference": record.get("time_reference"),
            "video_info": video.get("video_info"),
        },
    )


def annotation_file(data_dir: Path) -> Path:
    for path in (data_dir / "video_info.meta.jsonl", data_dir / "data" / "video_info.meta.jsonl"):
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"no LVBench annotations under {data_dir}: expected video_info.meta.jsonl"
    )


def load(data_dir: Path) -> LoadResult:
    """Every question of every video line; bad lines and items go to ``errors``."""
    data_dir = Path(data_dir).resolve()
    path = annotation_file(data_dir)
    media = MediaIndex(data_dir, MEDIA_SUBDIRS)
    source = str(path)
    samples, errors = [], []
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
        for qa in video["qa"]:
            try:
                samples.append(record_to_sample(qa, video=video, source=source, media=media))
            except RecordError as err:
                errors.append(err)
    missing = list(dict.fromkeys(s.media for s in samples if not Path(s.media).is_file()))
    return LoadResult(samples, errors, missing, [source], {"format": "jsonl"})


TASK = Task(
    name="lvbench",
    load=load,
    score=score,
    aggregate=aggregate,
    primary="accuracy",
    profiles=PROFILES,
    category_fields=("question_type",),
    description=(
        "LVBench: multiple choice on hour-long videos, exact letter match over all items "
        "(robust extraction); per question type under the leaderboard codes."
    ),
)
