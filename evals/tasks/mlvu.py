"""MLVU (dev): load the official per-task JSON or the sy1998/MLVU_dev parquet.

Two on-disk formats, detected in this order (``notes["format"]`` says which was read):

- ``json``: the official release (JUNJIE99/MLVU ``data/``; ``MLVU/json/`` in the HF release),
  ``<data_dir>/{json,MLVU/json,.}/<N>_<task>.json`` (``1_plotQA.json`` ... ``9_summary.json``),
  records ``video, duration, question, candidates, answer (option TEXT), question_type``;
  videos in ``video/<N>_<task>/<video>`` beside the json folder.
- ``parquet``: the ``sy1998/MLVU_dev`` mirror, ``<data_dir>/mlvu/test-*.parquet``, rows
  ``video_name, question (options embedded as "(A) ..." lines), answer (letter), task_type``
  (evals.tasks.mlvu_mirror).

Both give the same Sample: id ``<task>_<index>`` (index within the task, in file order), the
official multiple-choice prompt, and the official system prompt in ``extra["system_prompt"]``.
Video basenames collide across task folders (363 in the dev set), so a video is looked up in
its task folder when one exists and by basename only in a flat layout.

Every one of the 2,175 multiple-choice records loads, as the official ``qa_template``
(choice_bench.py@fd060c1) reads it, so counts and M-Avg stay official: blank questions,
answers and candidates are kept, and the gold letter is `official_gold`'s (``"@"`` for the
two needle answers that no candidate equals). ``notes["irregular"]`` lists such records with
the reason, which ``extra["irregular"]`` also holds.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import evals.tasks.mlvu_mirror as mlvu_mirror
from evals.formats import read_parquet
from evals.media import MEDIA_DIRS, MediaIndex
from evals.sample import RecordError, Sample
from evals.scorers.mlvu import DEFAULT, LETTERS, MC_TASKS, PROFILES, aggregate, score
from evals.tasks.base import LoadResult, Task

# ----------------------------------------------------------------------------- loading

GENERATION_TASKS = ("sub_scene", "summary")
ALIASES = {"findNeedle": "needle", "subPlot": "sub_scene"}  # question_type -> task name
SYSTEM_PROMPT = (
    "Carefully watch this video and pay attention to every detail. Based on your "
    "observations, select the best option that accurately addresses the question."
)
POST_PROMPT = "Only give the best option."
ANSWER_PREFILL = "Best option:("  # official choice_bench.py; never part of Sample.prompt
NO_GOLD = chr(ord("A") - 1)  # "@": qa_template's letter for an answer no candidate equals


def task_name(name: str) -> str:
    """'1_plotQA' -> 'plotQA', 'findNeedle' -> 'needle'."""
    name = re.sub(r"^\d+_", "", name)
    return ALIASES.get(name, name)


def task_dirs(media: MediaIndex, task: str) -> tuple[Path, ...]:
    """Existing video folders of a task: video/<N>_<task>/ or video/<task>/ (any media dir,
    the media dir's before the data dir's)."""
    found = []
    for root in media.roots:
        for sub in MEDIA_DIRS:
            base = root / sub if sub else root
            if base.is_dir():
                found += [
                    p for p in sorted(base.iterdir()) if p.is_dir() and task_name(p.name) == task
                ]
    return tuple(dict.fromkeys(found))


def build_prompt(question: str, candidates: Sequence[str]) -> str:
    """The official user prompt: Question, Options as "(A) ..." (the block right-stripped, as
    ``qa_template`` does), "Only give the best option."."""
    lines = [f"Question: {question}", "Options:"]
    lines += [f"({LETTERS[i]}) {c}" for i, c in enumerate(candidates)]
    return "\n".join(lines).rstrip() + "\n" + POST_PROMPT  # qa_template rstrips the block


def _video_path(media: MediaIndex, name: str, folders: Sequence[Path]) -> str:
    if "/" in name and (found := media.locate(name)):  # already a path under a root
        return str(found.resolve())
    for folder in folders:
        if (folder / name).is_file():
            return str((folder / name).resolve())
    if folders:  # the task has its own folder: never fall back to a same-named other video
        return str(folders[0] / name)
    found = media.find(name)
    return str(found.resolve()) if found else media.expected(name)


def official_gold(candidates: Sequence[str], answer: str) -> tuple[str, str | None]:
    """(gold letter, why the record is irregular or None), as the official ``qa_template``
    (choice_bench.py@fd060c1) reads it: the LAST candidate equal to the answer text; with none
    equal, ``answer_idx`` stays -1 and the letter is ``chr(ord('A') - 1)``, i.e. NO_GOLD.

    >>> official_gold(["x", "y", "y"], "y")
    ('C', 'answer matches candidates B, C; the last is gold (qa_template)')
    >>> official_gold(["x", "y"], "z")[0]
    '@'
    """
    golds = [LETTERS[i] for i, c in enumerate(candidates) if c == answer]
    if not golds:
        return NO_GOLD, (
            f"answer {answer!r} is not among the candidates: gold is {NO_GOLD!r} "
            "(qa_template's answer_idx -1), which no reply matches"
        )
    reasons = []
    if len(golds) > 1:
        reasons.append(
            f"answer matches candidates {', '.join(golds)}; the last is gold (qa_template)"
        )
    if not answer.strip():
        reasons.append(f"answer is blank and matches blank candidate {golds[-1]}")
    return golds[-1], "; ".join(reasons) or None


def record_to_sample(
    record: dict,
    *,
    source: str,
    media: MediaIndex,
    task: str,
    index: int,
    folders: Sequence[Path] = (),
) -> Sample:
    """One official JSON record (answer = option text) as a Sample; ``folders``: task_dirs().

    A multiple-choice record loads whenever the official script reads it: blank question,
    answer or candidates are kept as they are, and the gold letter is `official_gold`'s;
    ``extra["irregular"]`` says why such a record is odd.
    """
    rid = f"{task}_{index}"
    if not isinstance(record, dict):
        raise RecordError(source, rid, f"record is not an object: {record!r}")
    generation = task in GENERATION_TASKS
    missing = [
        f
        for f in ("video", "question", "answer")
        if record.get(f) is None or (record[f] == "" and (generation or f == "video"))
    ]
    if missing:
        raise RecordError(source, rid, f"missing field(s) {', '.join(missing)}")
    question, answer, video = str(record["question"]), str(record["answer"]), str(record["video"])
    extra: dict = {"system_prompt": SYSTEM_PROMPT, "duration": record.get("duration")}
    kind, target, options = "open_ended", answer, ()
    if not generation:
        candidates = record.get("candidates")
        if not isinstance(candidates, list) or not 2 <= len(candidates) <= len(LETTERS):
            raise RecordError(
                source, rid, f"candidates must be a list of 2-8 texts: {candidates!r}"
            )
        candidates = [str(c) for c in candidates]
        golds = [LETTERS[i] for i, c in enumerate(candidates) if c == answer]
        if len(golds) > 1:
            extra["ambiguous_gold"] = golds
        target, irregular = official_gold(candidates, answer)
        if not question.strip():
            irregular = "; ".join(filter(None, ["question is blank", irregular]))
        if irregular:
            extra["irregular"] = irregular
        extra["answer_prefill"] = ANSWER_PREFILL
        kind = "multiple_choice"
        options = tuple(f"{LETTERS[i]}. {c}" for i, c in enumerate(candidates))
    elif "scoring_points" in record:
        extra["scoring_points"] = record["scoring_points"]
    return Sample(
        id=rid,
        media=_video_path(media, video, folders),
        question=question,
        prompt=build_prompt(question, [o[3:] for o in options]) if options else question,
        kind=kind,
        target=target,
        options=options,
        cluster=f"{task}/{video}",
        categories={"task": task},
        extra=extra,
    )


def parquet_record_to_sample(
    record: dict, *, source: str, media: MediaIndex, index: int, folders: Sequence[Path] = ()
) -> Sample:
    """One ``sy1998/MLVU_dev`` row (options inside the question, letter answer) as a Sample."""
    task = task_name(mlvu_mirror.row_task(record))
    as_json, letter = mlvu_mirror.row_to_record(record, source=source, rid=f"{task}_{index}")
    sample = record_to_sample(
        as_json, source=source, media=media, task=task, index=index, folders=folders
    )
    extra = {k: v for k, v in sample.extra.items() if k != "irregular"}  # read from the text
    extra["raw_question"] = str(record["question"])  # the release asks it with the options in it
    return dataclasses.replace(sample, target=letter, extra=extra)  # the row's letter is gold


def json_files(data_dir: Path) -> tuple[list[Path], Path]:
    """(the official ``<N>_<task>.json`` files, the folder their ``video/`` is under)."""
    for folder in (data_dir / "json", data_dir / "MLVU" / "json", data_dir):
        found = [p for p in folder.glob("*.json") if re.match(r"^\d+_", p.name)]
        if found:
            base = folder.parent if folder.name == "json" else folder
            return sorted(found, key=lambda p: int(p.name.split("_")[0])), base
    return [], data_dir


def _json_samples(path: Path, media: MediaIndex, samples: list, errors: list) -> None:
    task = task_name(path.stem)
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        errors.append(RecordError(str(path), "*", f"not valid JSON: {err}"))
        return
    if not isinstance(records, list):
        errors.append(RecordError(str(path), "*", "expected a JSON list of records"))
        return
    folders = task_dirs(media, task)
    for index, record in enumerate(records):
        try:
            samples.append(
                record_to_sample(
                    record, source=str(path), media=media, task=task, index=index, folders=folders
                )
            )
        except RecordError as err:
            errors.append(err)


def _parquet_samples(
    files: list[Path], media: MediaIndex, wanted: set[str], samples: list, errors: list
) -> None:
    counters: dict[str, int] = {}
    folders = {t: task_dirs(media, t) for t in wanted}
    for path in files:
        for record in read_parquet(path):
            task = task_name(mlvu_mirror.row_task(record))
            index = counters[task] = counters.get(task, -1) + 1
            if task not in (*MC_TASKS, *GENERATION_TASKS):
                errors.append(RecordError(str(path), f"{task}_{index}", "unknown task_type"))
                continue
            if task not in wanted:
                continue
            try:
                sample = parquet_record_to_sample(
                    record, source=str(path), media=media, index=index, folders=folders[task]
                )
            except RecordError as err:
                errors.append(err)
                continue
            samples.append(sample)


def load(
    data_dir: Path, *, tasks: Iterable[str] = MC_TASKS, media_dir: str | Path | None = None
) -> LoadResult:
    """The requested tasks (default: the 7 multiple-choice ones) from whichever format exists;
    ``notes["irregular"]`` lists the official records loaded as the reference reads them."""
    data_dir = Path(data_dir).resolve()
    wanted = {task_name(t) for t in tasks}
    samples: list[Sample] = []
    errors: list[RecordError] = []
    every_json, base = json_files(data_dir)
    media = MediaIndex(base, media_dir=media_dir)
    if every_json:
        fmt, files = "json", [p for p in every_json if task_name(p.stem) in wanted]
        for path in files:
            _json_samples(path, media, samples, errors)
    else:
        fmt, files = "parquet", mlvu_mirror.parquet_files(data_dir)
        if not files:
            raise FileNotFoundError(
                f"no MLVU annotations under {data_dir}: expected json/<N>_<task>.json "
                "(official, MLVU/json/ in the HF release) or mlvu/test-*.parquet "
                "(sy1998/MLVU_dev)"
            )
        _parquet_samples(files, media, wanted, samples, errors)
    missing = list(dict.fromkeys(s.media for s in samples if not Path(s.media).is_file()))
    found = {s.categories["task"] for s in samples}
    notes = {"format": fmt, "tasks": sorted(wanted), "tasks_without_items": sorted(wanted - found)}
    if fmt == "json":
        notes["irregular"] = [
            {"id": s.id, "reason": s.extra["irregular"]} for s in samples if "irregular" in s.extra
        ]
    return LoadResult(samples, errors, missing, [str(p) for p in files], notes)


TASK = Task(
    name="mlvu",
    load=load,
    score=score,
    aggregate=aggregate,
    profiles=PROFILES,
    default_profile=DEFAULT,
    category_fields=("task",),
    description=(
        "MLVU dev, the 7 multiple-choice tasks: MLVU's own letter check; M-Avg is the macro "
        "mean of per-task accuracies (official) or VLMEvalKit's micro mean (vlmevalkit)."
    ),
)
