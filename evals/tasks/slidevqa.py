"""SlideVQA: load questions on 20-page slide decks (HF parquet or JSONL) and score EM/F1.

On disk::

    HF NTT-hil-insight/SlideVQA:  <data_dir>/{data/,}test-*.parquet with qa_id, question,
        answer, evidence_pages, deck_name, page_1..page_20 (image structs; bytes written once
        to <data_dir>/extracted_images/<sha1>.<ext>, or ``image_dir``)
    GitHub nttmdlab-nlp/SlideVQA: <data_dir>/{annotations/qa/,}test.jsonl with the same QA
        fields and image_urls; pages at images/<split>/<deck_name>/<basename of the url>
        (download_slides_slideshare.py), or images/<deck_name>/..., or <deck_name>/...
    Either format may instead give page_1..page_20 as paths relative to data_dir.

Pages: ``extra["pages"]`` lists the deck's page images on disk in page order, with their
numbers in ``extra["page_numbers"]`` (1-based) and absent ones in ``extra["missing_pages"]``.
``media`` is the deck itself (a folder of linked pages, one page per second of the time
axis, so crops are page spans) when every page is on disk; otherwise the lowest-numbered
evidence page (``extra["media_page"]``), or page 1 when the record names none, and that
page is reported missing if it is not on disk. With ``media_dir`` the page folders are looked
for there first, then under data_dir.

A null answer (None, NaN, or no answer field) is read as "not answerable" (NOT_ANSWERABLE),
as lmms-eval does; ``extra["null_answer"]`` marks such items and ``notes["null_answers"]``
lists them. A blank answer string is still a malformed record.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evals.media import MediaIndex
from evals.sample import RecordError, Sample
from evals.scorers.slidevqa import DEFAULT, PROFILES, aggregate, score
from evals.tasks.base import LoadResult, Task
from evals.tasks.documents import (
    ANSWER_FORMAT,
    DOCUMENT_CONTEXT,
    IMAGE_DIRS,
    annotation_files,
    collect_samples,
    image_file,
)

# ----------------------------------------------------------------------------- loading

N_PAGES = 20
PATTERNS = ("{split}-*.parquet", "{split}.parquet", "{split}.jsonl", "{split}.json")
FOLDERS = ("data", "annotations/qa", "qa", "")
REQUIRED = ("qa_id", "question", "answer", "deck_name")  # a null answer is NOT_ANSWERABLE
# lmms-eval@75571cf tasks/slidevqa normalize_answer reads a null (None or NaN) answer as this,
# as VLMEvalKit does; the official evaluate.py@e1f0bd9 has no null case (it would raise on
# ``None.lower()``), so this is the only reading either harness gives a null.
NOT_ANSWERABLE = "not answerable"
CATEGORY_FIELDS = ("reasoning_type", "answer_type")
INSTRUCTION = (
    "You are given a page of a slide deck. Answer the question with a short answer: a word, "
    "a number, or a phrase."
)


def is_null(value: Any) -> bool:
    """A missing answer: None (JSON null, parquet null) or a NaN a dataframe put there."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def build_prompt(question: str) -> str:
    return f"{INSTRUCTION}\nQuestion: {question}\n{ANSWER_FORMAT}"


def _page_path(value: Any, data_dir: Path, media: MediaIndex, image_dir: Path) -> tuple[str, bool]:
    """A page given as a path (relative to data_dir or images/; never matched by file name
    alone, since decks reuse page names) or as image bytes."""
    if isinstance(value, Mapping) and not value.get("bytes"):
        value = value.get("path") or ""
    if isinstance(value, str):
        found = media.locate(value, ("", "images"))
        if found is not None:
            return str(found.resolve()), True
        return str((data_dir / value).resolve()), False
    found = image_file(value, media=media, image_dir=image_dir)
    return found if found else ("", False)


def _pages_from_urls(record: Mapping, media: MediaIndex, split: str) -> dict[int, tuple[str, bool]]:
    deck, pages = str(record["deck_name"]), {}
    folders = [
        folder
        for root in media.roots
        for folder in (root / "images" / split / deck, root / "images" / deck, root / deck)
    ]
    for number, url in enumerate(record.get("image_urls") or [], start=1):
        name = str(url).rsplit("/", 1)[-1].split("?", 1)[0]
        found = next((f / name for f in folders if (f / name).is_file()), None)
        where = found or media.root / "images" / split / deck / name
        pages[number] = (str(where.resolve()), found is not None)
    return pages


def _evidence(value: Any, source: str, rid: str) -> list[int]:
    if value is None:
        return []
    items = [value] if isinstance(value, int | str) else list(value)
    try:
        pages = sorted({int(p) for p in items})
    except (TypeError, ValueError):
        raise RecordError(source, rid, f"evidence_pages must be page numbers: {value!r}") from None
    if any(not 1 <= p <= N_PAGES for p in pages):
        raise RecordError(source, rid, f"evidence_pages outside 1-{N_PAGES}: {value!r}")
    return pages


def record_to_sample(
    record: Any,
    *,
    source: str,
    split: str,
    data_dir: Path,
    media: MediaIndex,
    image_dir: Path,
) -> Sample:
    if isinstance(record, RecordError):
        raise record
    if not isinstance(record, Mapping):
        raise RecordError(source, "?", f"expected an object, got {type(record).__name__}")
    rid = str(record.get("qa_id") if record.get("qa_id") is not None else "?")
    null_answer = is_null(record.get("answer"))  # absent too, as lmms-eval's doc.get reads it
    missing = [
        f for f in REQUIRED if record.get(f) in (None, "") and not (f == "answer" and null_answer)
    ]
    if missing:
        raise RecordError(source, rid, f"missing field(s) {', '.join(missing)}")
    answer = NOT_ANSWERABLE if null_answer else str(record["answer"])
    if not answer.strip():
        raise RecordError(source, rid, "answer is blank")
    evidence = _evidence(record.get("evidence_pages"), source, rid)
    if any(f"page_{n}" in record for n in range(1, N_PAGES + 1)):
        pages = {
            n: _page_path(record[f"page_{n}"], data_dir, media, image_dir)
            for n in range(1, N_PAGES + 1)
            if record.get(f"page_{n}") not in (None, "")
        }
    else:
        pages = _pages_from_urls(record, media, split)
    pages = {n: p for n, p in pages.items() if p[0]}
    if not pages:
        raise RecordError(source, rid, "no page images (page_1..page_20 or image_urls)")
    first = next((p for p in evidence if p in pages), min(pages))
    present = sorted(n for n, (_, ok) in pages.items() if ok)
    categories = {
        f: record[f] if isinstance(record[f], list) else str(record[f])
        for f in CATEGORY_FIELDS
        if record.get(f) not in (None, "")
    }
    question = str(record["question"])
    return Sample(
        id=rid,
        media=pages[first][0],
        question=question,
        prompt=build_prompt(question),
        kind="open_ended",
        target=answer,
        cluster=str(record["deck_name"]),
        categories=categories,
        extra={
            "pages": [pages[n][0] for n in present],
            "page_numbers": present,
            "missing_pages": sorted(set(pages) - set(present)),
            "evidence_pages": evidence,
            "media_page": first,
            "deck_name": str(record["deck_name"]),
            "arithmetic_expression": record.get("arithmetic_expression"),
            **({"null_answer": True} if null_answer else {}),
        },
    )


def as_deck(sample: Sample, root: Path) -> Sample:
    """Point `media` at a folder of the deck's pages (links, in page order), so the graph
    shows page numbers and a sub-agent's window is a span of pages. A deck with a missing
    page keeps its evidence page as media: page numbers would shift otherwise."""
    if sample.extra["missing_pages"] or not sample.extra["pages"]:
        return sample
    folder = root / re.sub(r"[^\w.-]+", "_", sample.extra["deck_name"])
    folder.mkdir(parents=True, exist_ok=True)
    for number, page in zip(sample.extra["page_numbers"], sample.extra["pages"], strict=True):
        link = folder / f"page_{number:02d}{Path(page).suffix}"
        if not link.exists():
            link.symlink_to(Path(page).resolve())
    return dataclasses.replace(sample, media=str(folder))


def load(
    data_dir: Path,
    *,
    split: str = "test",
    image_dir: Path | None = None,
    decks: bool = True,
    media_dir: str | Path | None = None,
) -> LoadResult:
    """Every QA pair of the split; a record whose media page is absent is in
    ``missing_media``, and ``notes["missing_pages"]`` counts absent non-media pages. With
    `decks`, a complete deck is shown as pages (see `as_deck`), under `data_dir/decks/`."""
    data_dir = Path(data_dir).resolve()
    files = annotation_files(data_dir, [p.format(split=split) for p in PATTERNS], FOLDERS)
    media = MediaIndex(data_dir, IMAGE_DIRS, media_dir=media_dir)
    image_dir = Path(image_dir) if image_dir else data_dir / "extracted_images"

    def to_sample(record: Any, _rid: str, source: str) -> Sample:
        sample = record_to_sample(
            record, source=source, split=split, data_dir=data_dir, media=media, image_dir=image_dir
        )
        return as_deck(sample, data_dir / "decks") if decks else sample

    samples, errors, missing = collect_samples(files, to_sample, duplicate="duplicate qa_id")
    notes = {
        "format": files[0].suffix.lstrip("."),
        "split": split,
        "missing_pages": sum(len(s.extra["missing_pages"]) for s in samples),
        "null_answers": [s.id for s in samples if s.extra.get("null_answer")],
    }
    return LoadResult(samples, errors, missing, [str(p) for p in files], notes)


TASK = Task(
    context=DOCUMENT_CONTEXT,
    name="slidevqa",
    load=load,
    score=score,
    aggregate=aggregate,
    profiles=PROFILES,
    default_profile=DEFAULT,
    category_fields=CATEGORY_FIELDS,
    description=(
        "SlideVQA (NTT-hil-insight/SlideVQA, test): questions on 20-page slide decks; "
        "official EM/F1 after SlideVQA's own answer normalisation (evaluate.py, QA task); "
        "lmms_eval uses plain SQuAD normalisation. media = the whole deck."
    ),
)
