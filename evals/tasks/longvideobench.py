"""LongVideoBench (val): load ``lvb_val.json`` or the validation parquet.

On disk (HF ``longvideobench/LongVideoBench``)::

    <data_dir>/lvb_val.json                        (official; preferred when present)
    <data_dir>/validation-*.parquet                (or data/validation-*.parquet)
    <data_dir>/videos/<video_path>                 (videos.tar; any of the usual dirs)

JSON records hold ``candidates`` (a list); parquet rows hold ``option0..option4`` with "N/A"
for unused slots. ``correct_choice`` is a 0-based index. Most items have 5 options, some 4,
one has 3: the option count is never assumed. ``notes["format"]`` says which file was read.
"""

from __future__ import annotations

import json
from pathlib import Path

from evals.formats import read_parquet
from evals.media import MediaIndex
from evals.sample import RecordError, Sample
from evals.scorers.longvideobench import DEFAULT, PROFILES, aggregate, score, score_all
from evals.tasks.base import LoadResult, Task

# ----------------------------------------------------------------------------- loading

LETTERS = "ABCDE"
UNUSED = "N/A"
POST_PROMPT = "Answer with the option's letter from the given choices directly."
FIELDS = ("id", "video_path", "question", "correct_choice")


def candidates_of(record: dict, source: str, rid: str) -> list[str]:
    """``candidates``, or option0..option4 with trailing "N/A" slots dropped."""
    if record.get("candidates") is not None:
        raw = record["candidates"]
        if isinstance(raw, str):
            raise RecordError(source, rid, "candidates must be a list")
        raw = [str(c) for c in raw]
    else:
        raw = [record.get(f"option{i}") for i in range(len(LETTERS))]
        raw = [UNUSED if c is None else str(c) for c in raw]
        while raw and raw[-1] == UNUSED:
            raw.pop()
    if UNUSED in raw:  # a gap would shift every later letter against correct_choice
        raise RecordError(source, rid, f'"{UNUSED}" option before a used one: {raw!r}')
    if not 2 <= len(raw) <= len(LETTERS):
        raise RecordError(source, rid, f"expected 2-5 options, got {len(raw)}")
    return raw


def build_prompt(question: str, candidates: list[str]) -> str:
    """lmms-eval's LongVideoBench prompt: question, "A. ..." lines, answer instruction."""
    lines = [question] + [f"{LETTERS[i]}. {c}" for i, c in enumerate(candidates)]
    return "\n".join(lines) + "\n" + POST_PROMPT


def record_to_sample(record: dict, *, source: str, media: MediaIndex) -> Sample:
    if not isinstance(record, dict):
        raise RecordError(source, "?", f"record is not an object: {record!r}")
    rid = str(record.get("id") or "?")
    missing = [f for f in FIELDS if record.get(f) in (None, "")]
    if missing:
        raise RecordError(source, rid, f"missing field(s) {', '.join(missing)}")
    candidates = candidates_of(record, source, rid)
    choice = record["correct_choice"]
    if isinstance(choice, bool) or not isinstance(choice, int):
        raise RecordError(source, rid, f"correct_choice must be an integer, got {choice!r}")
    if not 0 <= choice < len(candidates):
        raise RecordError(
            source, rid, f"correct_choice {choice} is out of range for {len(candidates)} options"
        )
    video = str(record["video_path"])
    found = media.find(video)
    question = str(record["question"])
    return Sample(
        id=rid,
        media=str(found.resolve()) if found else media.expected(video),
        question=question,
        prompt=build_prompt(question, candidates),
        kind="multiple_choice",
        target=LETTERS[choice],
        options=tuple(f"{LETTERS[i]}. {c}" for i, c in enumerate(candidates)),
        cluster=str(record.get("video_id") or Path(video).stem),
        categories={
            "duration_group": str(record.get("duration_group", "")),
            "question_category": str(record.get("question_category", "")),
            "topic_category": str(record.get("topic_category", "")),
        },
        extra={
            "duration": record.get("duration"),
            "level": record.get("level"),
            "subtitle_path": record.get("subtitle_path"),
            "starting_timestamp_for_subtitles": record.get("starting_timestamp_for_subtitles"),
        },
    )


def _records(data_dir: Path) -> tuple[str, list[Path], list[tuple[str, list]]]:
    """(format, files read, [(source, records)]); JSON preferred over parquet."""
    for path in (data_dir / "lvb_val.json", data_dir / "data" / "lvb_val.json"):
        if path.is_file():
            try:
                records = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path} is not valid JSON: {err}") from err
            return "json", [path], [(str(path), records)]
    for folder in (data_dir, data_dir / "data"):
        files = sorted(folder.glob("validation-*.parquet"))
        if files:
            return "parquet", files, [(str(p), read_parquet(p)) for p in files]
    raise FileNotFoundError(
        f"no LongVideoBench annotations under {data_dir}: expected lvb_val.json "
        "or validation-*.parquet"
    )


def load(data_dir: Path, *, media_dir: str | Path | None = None) -> LoadResult:
    """The validation items; bad records in ``errors``, absent videos in ``missing_media``.
    ``media_dir``: a folder searched for the videos before data_dir."""
    data_dir = Path(data_dir).resolve()
    fmt, files, sources = _records(data_dir)
    media = MediaIndex(data_dir, media_dir=media_dir)
    samples, errors = [], []
    for source, records in sources:
        for record in records:
            try:
                samples.append(record_to_sample(record, source=source, media=media))
            except RecordError as err:
                errors.append(err)
    missing = list(dict.fromkeys(s.media for s in samples if not Path(s.media).is_file()))
    return LoadResult(samples, errors, missing, [str(p) for p in files], {"format": fmt})


TASK = Task(
    name="longvideobench",
    load=load,
    score=score,
    aggregate=aggregate,
    profiles=PROFILES,
    default_profile=DEFAULT,
    score_all=score_all,
    category_fields=("duration_group", "question_category", "topic_category"),
    description=(
        "LongVideoBench val: 4-5 option multiple choice, VideoMME-style letter extraction; "
        "lmms_eval guesses a (seeded) random letter where official counts the item wrong."
    ),
)
