"""MMVU (validation): load ``validation.json`` or lmms-eval's parquet mirror, and the videos.

Two on-disk formats, the official first (``notes["format"]`` says which was read)::

    json     github/HF yale-nlp/MMVU: <data_dir>/validation.json (or data/validation.json),
             records id, video (URL), youtube_url, question_type, metadata, question,
             choices (A-E), answer
    parquet  HF lmms-eval/MMVU (formerly lmms-lab/MMVU; the old name still resolves):
             <data_dir>/{data/,}validation-*.parquet with the columns lmms-eval's mmvu task
             reads (id, video_path, question, choices, answer, question_type) and
             ``videos.zip``, which lmms-eval extracts into $HF_HOME/mmvu (pass that folder
             as ``media_dir``; a zip is never extracted here, only named when a video is
             still inside it)

Videos: ``<root>/videos/<Subject>/<n>.mp4``, the path inside each record's ``video`` URL or
its ``video_path``, under the media dir first, then the data dir; the file names repeat
across subjects (``0.mp4`` ...), so a video is found by its subject-relative path, never by
basename. Multiple-choice items have ``choices`` A-E and a letter answer; open-ended
items have all-empty choices and a free-text answer. The prompt is the official direct-answer
("DO") template; ``prompt="cot"`` selects the official chain-of-thought one. Empty choices of
a multiple-choice item are left out of the options (the official code would print "E: ").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from evals.formats import read_parquet
from evals.media import MEDIA_DIRS, MediaIndex
from evals.sample import RecordError, Sample
from evals.scorers.mmvu import DEFAULT, PROFILES, aggregate, score
from evals.tasks.base import LoadResult, Task

# ----------------------------------------------------------------------------- loading

LETTERS = "ABCDE"
KINDS = {"multiple-choice": "multiple_choice", "open-ended": "open_ended"}
INSTRUCTIONS = {
    ("direct", "multiple-choice"): (
        "Do not generate any intermediate reasoning process. Answer directly with the option "
        "letter from the given choices."
    ),
    ("direct", "open-ended"): (
        "Do not generate any intermediate reasoning process. Directly output the final short "
        "answer."
    ),
    ("cot", "multiple-choice"): (
        "Answer the given multiple-choice question step by step. Begin by explaining your "
        "reasoning process clearly. Conclude by stating the final answer using the following "
        "format: 'Therefore, the final answer is: $LETTER' (without quotes), where $LETTER is "
        "one of the options. Think step by\nstep before answering."
    ),
    ("cot", "open-ended"): (
        "Answer the given question step by step. Begin by explaining your reasoning process "
        "clearly. Conclude by stating the final answer using the following format: 'Therefore, "
        "the final answer is: 'Answer: $ANSWER' (without quotes), where $ANSWER is the final "
        "answer of the question. Think step by step\nbefore answering."
    ),
}
PromptStyle = Literal["direct", "cot"]


def relative_video(ref: str) -> str:
    """'https://.../resolve/main/videos/Art/0.mp4' -> 'videos/Art/0.mp4'."""
    ref = ref.strip()
    if "/resolve/" in ref:
        ref = ref.split("/resolve/", 1)[1].split("/", 1)[-1]  # drop the revision
    return ref.lstrip("/")


def find_video(media: MediaIndex, relative: str) -> Path | None:
    """The file at ``relative`` under a root or a media dir, with or without 'videos/'."""
    inner = relative.split("/", 1)[1] if relative.startswith("videos/") else relative
    return media.locate(relative, MEDIA_DIRS) or media.locate(inner, MEDIA_DIRS)


def _mapping(raw, field: str, source: str, rid: str) -> dict:
    """A dict field as JSON gives it, a parquet struct gives it, or a JSON string holds it."""
    if isinstance(raw, str) and raw.strip().startswith("{"):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as err:
            raise RecordError(source, rid, f"{field} is not valid JSON: {err}") from None
    if not isinstance(raw, dict):
        raise RecordError(source, rid, f"{field} must be a dict, got {raw!r}")
    return raw


def _choices(raw, source: str, rid: str) -> dict[str, str]:
    if isinstance(raw, list):
        raw = dict(zip(LETTERS, raw, strict=False))
    raw = _mapping(raw, "choices", source, rid)
    return {k: str(v or "").strip() for k, v in raw.items()}


def build_prompt(question: str, options: tuple[str, ...], qtype: str, style: PromptStyle) -> str:
    lines = [f"Question: {question}", *(o.replace(". ", ": ", 1) for o in options)]
    return "\n".join(lines) + "\n\n" + INSTRUCTIONS[(style, qtype)]


def record_to_sample(
    record: dict, *, source: str, media: MediaIndex, prompt: PromptStyle = "direct"
) -> Sample:
    if not isinstance(record, dict):
        raise RecordError(source, "?", f"record is not an object: {record!r}")
    rid = str(record.get("id") or "?")
    refs = (record.get("video_path"), record.get("video"))  # mirror path first, then the URL
    video_ref = next((r for r in refs if isinstance(r, str) and r.strip()), None)
    missing = [f for f in ("id", "question_type", "question", "answer") if not record.get(f)]
    if missing or not video_ref:
        raise RecordError(source, rid, f"missing field(s) {', '.join(missing or ['video'])}")
    qtype = str(record["question_type"])
    if qtype not in KINDS:
        raise RecordError(source, rid, f"unknown question_type {qtype!r}")
    answer = str(record["answer"]).strip()
    options: tuple[str, ...] = ()
    if qtype == "multiple-choice":
        choices = _choices(record.get("choices"), source, rid)
        options = tuple(f"{k}. {v}" for k, v in sorted(choices.items()) if v)
        if answer not in LETTERS or not choices.get(answer):
            raise RecordError(source, rid, f"answer {answer!r} is not a non-empty choice A-E")
    relative = relative_video(str(video_ref))
    found = find_video(media, relative)
    question = str(record["question"])
    metadata = record.get("metadata")
    subject = (
        str(_mapping(metadata, "metadata", source, rid).get("subject", "")) if metadata else ""
    )
    where = (
        str(found.resolve()) if found else media.describe_missing(media.root / relative, relative)
    )
    return Sample(
        id=rid,
        media=where,
        question=question,
        prompt=build_prompt(question, options, qtype, prompt),
        kind=KINDS[qtype],
        target=answer,
        options=options,
        cluster=relative,
        categories={"subject": subject, "question_type": qtype},
        extra={"video_url": str(video_ref), **_official_fields(record)},
    )


def _official_fields(record: dict) -> dict:
    """The choices (all five, blanks kept) and the answer exactly as the record holds them:
    MMVU's official judge prompt quotes both (evals.scorers.mmvu.judge_messages)."""
    raw = record.get("choices")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raw = None
    if isinstance(raw, list):
        raw = dict(zip(LETTERS, raw, strict=False))
    choices = (
        {str(k): "" if v is None else str(v) for k, v in raw.items()}
        if isinstance(raw, dict)
        else {}
    )
    return {"choices": choices, "answer_as_written": str(record.get("answer", ""))}


def annotation_files(data_dir: Path) -> tuple[str, list[Path]]:
    """("json", [validation.json]) or ("parquet", the mirror's validation shards)."""
    for path in (data_dir / "validation.json", data_dir / "data" / "validation.json"):
        if path.is_file():
            return "json", [path]
    for folder in (data_dir / "data", data_dir):
        shards = sorted(folder.glob("validation-*.parquet"))
        if shards:
            return "parquet", shards
    raise FileNotFoundError(
        f"no MMVU annotations under {data_dir}: expected validation.json (yale-nlp/MMVU) "
        "or data/validation-*.parquet (lmms-eval/MMVU)"
    )


def _records(fmt: str, path: Path) -> list:
    if fmt == "parquet":
        return read_parquet(path)
    records = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(records, list):
        raise ValueError(f"{path}: expected a JSON list of records")
    return records


def load(
    data_dir: Path, *, prompt: PromptStyle = "direct", media_dir: str | Path | None = None
) -> LoadResult:
    """Every validation item (both kinds); bad records in ``errors``."""
    if prompt not in ("direct", "cot"):
        raise ValueError(f"prompt must be 'direct' or 'cot', got {prompt!r}")
    data_dir = Path(data_dir).resolve()
    fmt, files = annotation_files(data_dir)
    media = MediaIndex(data_dir, media_dir=media_dir)
    samples, errors = [], []
    for path in files:
        for record in _records(fmt, path):
            try:
                samples.append(
                    record_to_sample(record, source=str(path), media=media, prompt=prompt)
                )
            except RecordError as err:
                errors.append(err)
    missing = list(dict.fromkeys(s.media for s in samples if not Path(s.media).is_file()))
    notes = {"format": fmt, "prompt": prompt}
    return LoadResult(samples, errors, missing, [str(p) for p in files], notes)


TASK = Task(
    name="mmvu",
    load=load,
    score=score,
    aggregate=aggregate,
    profiles=PROFILES,
    default_profile=DEFAULT,
    category_fields=("subject", "question_type"),
    description=(
        "MMVU validation: multiple-choice accuracy by letter (the official judge is not run); "
        "open-ended items get token F1, this project's stand-in, not the official metric."
    ),
)
