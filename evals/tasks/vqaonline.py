"""VQAonline: load community image questions (JSON/JSONL) and score SQuAD EM and token F1.

On disk (HF ``ChongyanChen/VQAonline``)::

    <data_dir>/{data/,}test.json     a list of records (or an object of id -> record, or JSONL)
                                     with image (a file name), question, context, answer
    <data_dir>/images*/<image>       the images (images/, images1/ ... as the release splits
                                     them), or data/ or data_dir itself

Sample ids: the record's ``id`` / ``question_id`` when present, else its key in an object of
records, else its row number. Answers are long community posts; the official metrics of the
paper (METEOR, ROUGE-L, BERTScore, a LLaMA judge, CLIPScore) need models, so this task scores
with SQuAD v1.1 EM and token F1 instead, which is this project's metric and not comparable
with the paper's numbers. EM is near 0 on such answers; F1 is the primary metric.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agents.scoring.text import normalize_answer, squad_exact_match, squad_f1
from evals.media import MediaIndex
from evals.sample import RecordError, Sample
from evals.tasks.base import LoadResult, Profile, Scored, Task
from evals.tasks.documents import (
    ANSWER_FORMAT,
    DOCUMENT_CONTEXT,
    annotation_files,
    collect_samples,
    final_answer,
)

PATTERNS = ("{split}.json", "{split}.jsonl", "{split}-*.parquet")
REQUIRED = ("image", "question", "answer")
ID_FIELDS = ("id", "question_id", "qid")
INSTRUCTION = (
    "Answer this question from an online community about the image, as a helpful expert "
    "would, using the context the asker gave."
)


def build_prompt(question: str, context: str) -> str:
    block = f"Context: {context.strip()}\n" if context.strip() else ""
    return f"{INSTRUCTION}\nQuestion: {question.strip()}\n{block}{ANSWER_FORMAT}"


def _image_dirs(data_dir: Path) -> tuple[str, ...]:
    found = sorted(p.name for p in data_dir.iterdir() if p.is_dir() and p.name.startswith("image"))
    return (*found, "data", "")


def record_to_sample(record: Any, *, rid: str, source: str, media: MediaIndex) -> Sample:
    if isinstance(record, RecordError):
        raise record
    if not isinstance(record, Mapping):
        raise RecordError(source, rid, f"expected an object, got {type(record).__name__}")
    rid = next((str(record[f]) for f in ID_FIELDS if record.get(f) not in (None, "")), rid)
    missing = [f for f in REQUIRED if not isinstance(record.get(f), str) or not record[f].strip()]
    if missing:
        raise RecordError(source, rid, f"missing or blank field(s) {', '.join(missing)}")
    image = record["image"].strip()
    found = media.find(image)
    question, context = record["question"], str(record.get("context") or "")
    topic = record.get("topic")
    return Sample(
        id=rid,
        media=str(found.resolve()) if found else str((media.root / image).resolve()),
        question=question,
        prompt=build_prompt(question, context),
        kind="open_ended",
        target=record["answer"],
        cluster=Path(image).name,
        categories={"topic": str(topic)} if topic not in (None, "") else {},
        extra={"context": context, "image": image},
    )


def load(data_dir: Path, *, split: str = "test", media_dir: str | Path | None = None) -> LoadResult:
    """Every record of the split; bad ones in ``errors``, absent images in ``missing_media``.
    ``media_dir``: a folder searched for the images before data_dir."""
    data_dir = Path(data_dir).resolve()
    files = annotation_files(data_dir, [p.format(split=split) for p in PATTERNS], ("", "data"))
    media = MediaIndex(data_dir, _image_dirs(data_dir), media_dir=media_dir)
    samples, errors, missing = collect_samples(
        files,
        lambda record, rid, source: record_to_sample(record, rid=rid, source=source, media=media),
    )
    notes = {"format": files[0].suffix.lstrip("."), "split": split}
    return LoadResult(samples, errors, missing, [str(p) for p in files], notes)


PROFILES = {
    "squad": Profile(
        "huggingface/evaluate@a7dd338 metrics/squad/compute_score.py: "
        "exact_match_score, f1_score, compute_score",
        "as_is",
        "f1",
    ),
    "robust": Profile("this project: SQuAD v1.1 on the Final Answer line", "as_is", "f1"),
}
DEFAULT = "squad"


def _check_profile(profile: str) -> None:
    if profile not in PROFILES:
        raise ValueError(f"vqaonline has no profile {profile!r}; known: {', '.join(PROFILES)}")


def score(reply: str, sample: Sample, profile: str = DEFAULT) -> Scored:
    """SQuAD v1.1 ``exact_match`` and ``f1`` (= ``score``) of one final reply (robust: of its
    Final Answer line, with ``formatted``).

    >>> s = Sample("1", "", "q", "p", "open_ended", "It is a Garcinia humilis (achacha).")
    >>> m = score("Final Answer: Garcinia humilis, the achacha", s, "robust").metrics
    >>> m["exact_match"], round(m["f1"], 3), m["formatted"]
    (0.0, 0.75, 1.0)
    """
    _check_profile(profile)
    text, metrics = reply, {}
    if profile == "robust":
        text, formatted = final_answer(reply)
        metrics["formatted"] = float(formatted)
    em, f1 = squad_exact_match(text, sample.target), squad_f1(text, sample.target)
    return Scored(
        {"score": f1, "exact_match": float(em), "f1": f1, **metrics}, text, normalize_answer(text)
    )


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = DEFAULT
) -> dict[str, float]:
    """``compute_score``: ``exact_match`` and ``f1`` x100 over every item (NaN with none);
    the answer-format share for robust."""
    _check_profile(profile)
    if not metrics:
        return {"exact_match": math.nan, "f1": math.nan}
    total = len(metrics)
    out = {
        "exact_match": 100.0 * sum(m["exact_match"] for m in metrics) / total,
        "f1": 100.0 * sum(m["f1"] for m in metrics) / total,
    }
    if profile == "robust":
        out["formatted"] = sum(m["formatted"] for m in metrics) / total
    return out


TASK = Task(
    context=DOCUMENT_CONTEXT,
    name="vqaonline",
    load=load,
    score=score,
    aggregate=aggregate,
    profiles=PROFILES,
    default_profile=DEFAULT,
    category_fields=("topic",),
    description=(
        "VQAonline (ChongyanChen/VQAonline, test): open community questions on images with "
        "long answers, scored by SQuAD v1.1 EM and token F1 - this project's metric, not the "
        "paper's (METEOR, ROUGE-L, BERTScore, LLaMA judge); 'official' names this project's."
    ),
)
