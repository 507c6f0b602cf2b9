"""ChartQAPro: load the chart questions (HF parquet or JSON/JSONL) and score relaxed accuracy.

On disk (HF ``ahmed-masry/ChartQAPro``, split ``test``)::

    <data_dir>/{data/,}test-*.parquet   columns image (struct of bytes, path), Question (list),
                                        Answer (list), Question Type, Year (list), Paragraph
    <data_dir>/{data/,}test.jsonl|json  the same fields, ``image`` a path relative to data_dir
                                        (found under data_dir, images/ or data/)

Images stored inside parquet are written once to ``<data_dir>/extracted_images/<sha1>.<ext>``
(or ``image_dir``); identical charts share one file and one cluster. Sample ids are the
record's ``id`` when it has one, else its row number across the files in name order.

The first section also holds what the three document tasks (ChartQAPro, SlideVQA,
VQAonline) share: record readers, image extraction, and the answer format of the board
study, ``Final Answer: <answer>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evals.media import MediaIndex
from evals.sample import RecordError, Sample
from evals.scorers.chartqapro import DEFAULT, PROFILES, aggregate, score
from evals.tasks.base import LoadResult, Task
from evals.tasks.documents import (
    ANSWER_FORMAT,
    DOCUMENT_CONTEXT,
    IMAGE_DIRS,
    annotation_files,
    collect_samples,
    image_file,
    text_list,
)

_PARSE_ERRORS = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)

# ----------------------------------------------------------------------------- loading

PATTERNS = ("{split}-*.parquet", "{split}.parquet", "{split}.jsonl", "{split}.json")
REQUIRED = ("Question", "Answer", "Question Type", "Year", "image")
COMMON = (
    "If the question is unanswerable based on the information in the provided image, your "
    "answer should be unanswerable."
)
SHORT = (
    "Your answer should be a single word, number, or phrase. "
    + COMMON
    + " Do not generate units. But if numerical units such as million, m, billion, B, or K are "
    "required, use the exact notation shown in the chart."
)
INSTRUCTIONS = {
    "Factoid": "You are given a factoid question that you need to answer based on the provided "
    "image.\n" + SHORT,
    "Hypothetical": "You are given a hypothetical question that you need to answer based on the "
    "provided image.\n" + SHORT,
    "Conversational": "You are given a multi-turn conversation, and your job is to answer the "
    "final question based on the conversation history and the information in the provided "
    "image.\n" + SHORT,
    "Multi Choice": "You are given a question along with different possible answers. You need "
    "to select the correct answer from them based on the provided image.\nYour answer should be "
    "one of the options letters only: a, b, c or d (just the letter itself). " + COMMON,
    "Fact Checking": "You are given a fact statement that you need to assess based on the "
    "provided image.\nYour answer should be either true or false. " + COMMON,
}
"""The paper's direct prompts per question type, with the board study's answer format in
place of "generate the final answer only" (this project's prompt; the paragraph comes first,
as VLMEvalKit sends it)."""
LIST_FORMAT = "If there are multiple answers, put them in brackets: ['Answer1', 'Answer2']."


def build_prompt(
    questions: list[str], answers: list[str], qtype: str, paragraph: str | None
) -> str:
    parts = [paragraph.strip()] if paragraph and paragraph.strip() else []
    parts.append(INSTRUCTIONS.get(qtype, INSTRUCTIONS["Factoid"]) + "\n" + LIST_FORMAT)
    if qtype == "Conversational" and len(questions) > 1:
        turns = zip(questions[:-1], answers[:-1], strict=False)
        parts.append("Conversation:\n" + "\n".join(f"Q: {q}\nA: {a}" for q, a in turns))
    parts.append(f"Question: {questions[-1]}\n{ANSWER_FORMAT}")
    return "\n\n".join(parts)


def record_to_sample(
    record: Any, *, rid: str, source: str, media: MediaIndex, image_dir: Path
) -> Sample:
    if isinstance(record, RecordError):
        raise record
    if not isinstance(record, Mapping):
        raise RecordError(source, rid, f"expected an object, got {type(record).__name__}")
    if record.get("id") not in (None, ""):
        rid = str(record["id"])
    missing = [f for f in REQUIRED if record.get(f) is None]
    if missing:
        raise RecordError(source, rid, f"missing field(s) {', '.join(missing)}")
    questions = text_list(record["Question"], "Question", source, rid)
    answers = text_list(record["Answer"], "Answer", source, rid)
    target = answers[-1].strip(".").strip("\n")  # as evaluate_predictions.py reads the gold
    if not target.strip():
        raise RecordError(source, rid, "the last Answer is blank")
    flags = record["Year"]
    flags = [flags] if isinstance(flags, str | bool) else list(flags)
    if not flags:
        raise RecordError(source, rid, "Year flags are empty")
    flags = [("YES" if f else "NO") if isinstance(f, bool) else str(f) for f in flags]
    qtype = str(record["Question Type"]).strip()
    image = image_file(record["image"], media=media, image_dir=image_dir)
    if image is None:
        raise RecordError(source, rid, f"image holds no path or bytes: {record['image']!r:.80}")
    paragraph = record.get("Paragraph")
    return Sample(
        id=rid,
        media=image[0],
        question=questions[-1],
        prompt=build_prompt(questions, answers, qtype, paragraph),
        kind="open_ended",
        target=target,
        cluster=Path(image[0]).name,
        categories={"question_type": qtype},
        extra={
            "answers": answers,
            "questions": questions,
            "year_flags": flags[-1:] if qtype == "Conversational" else flags,
            "paragraph": paragraph or "",
        },
    )


def load(
    data_dir: Path,
    *,
    split: str = "test",
    image_dir: Path | None = None,
    media_dir: str | Path | None = None,
) -> LoadResult:
    """Every record of the split; bad ones in ``errors``, absent images in ``missing_media``.
    ``media_dir``: a folder searched for image files before data_dir."""
    data_dir = Path(data_dir).resolve()
    files = annotation_files(data_dir, [p.format(split=split) for p in PATTERNS], ("data", ""))
    media = MediaIndex(data_dir, IMAGE_DIRS, media_dir=media_dir)
    image_dir = Path(image_dir) if image_dir else data_dir / "extracted_images"
    samples, errors, missing = collect_samples(
        files,
        lambda record, rid, source: record_to_sample(
            record, rid=rid, source=source, media=media, image_dir=image_dir
        ),
    )
    notes = {"format": files[0].suffix.lstrip("."), "split": split, "image_dir": str(image_dir)}
    return LoadResult(samples, errors, missing, [str(p) for p in files], notes)


TASK = Task(
    context=DOCUMENT_CONTEXT,
    name="chartqapro",
    load=load,
    score=score,
    aggregate=aggregate,
    profiles=PROFILES,
    default_profile=DEFAULT,
    category_fields=("question_type",),
    description=(
        "ChartQAPro (ahmed-masry/ChartQAPro, test): chart QA scored by the released "
        "relaxed accuracy (lists item by item, Year flags exact, numbers within 5%, else "
        "ANLS 0.5); 'paper' adds exact match for Multi Choice and Fact Checking."
    ),
)
