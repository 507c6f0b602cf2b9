"""MLVU (dev): load the official per-task JSON or the sy1998/MLVU_dev parquet.

Two on-disk formats, detected in this order (``notes["format"]`` says which was read):

- ``json``: the official release, ``<data_dir>/json/<N>_<task>.json`` (``1_plotQA.json`` ...
  ``9_summary.json``), records ``video, duration, question, candidates, answer (option TEXT),
  question_type``; videos in ``video/<N>_<task>/<video>``.
- ``parquet``: the ``sy1998/MLVU_dev`` mirror, ``<data_dir>/mlvu/test-*.parquet``, rows
  ``video_name, question (options embedded as "(A) ..." lines), answer (letter), task_type``.

Both give the same Sample: id ``<task>_<index>`` (index within the task, in file order), the
official multiple-choice prompt, and the official system prompt in ``extra["system_prompt"]``.
Video basenames collide across task folders (363 in the dev set), so a video is looked up in
its task folder when one exists and by basename only in a flat layout.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from evals.formats import read_parquet
from evals.media import MEDIA_DIRS, MediaIndex
from evals.sample import RecordError, Sample

# ----------------------------------------------------------------------------- loading
from evals.scorers.mlvu import LETTERS, MC_TASKS, aggregate, score
from evals.tasks.base import LoadResult, Task

GENERATION_TASKS = ("sub_scene", "summary")
ALIASES = {"findNeedle": "needle", "subPlot": "sub_scene"}  # question_type -> task name
SYSTEM_PROMPT = (
    "Carefully watch this video and pay attention to every detail. Based on your "
    "observations, select the best option that accurately addresses the question."
)
POST_PROMPT = "Only give the best option."
ANSWER_PREFILL = "Best option:("  # official choice_bench.py; never part of Sample.prompt
_OPTION = re.compile(r"^\s*\(([A-H])\)\s?(.*)$")


def task_name(name: str) -> str:
    """'1_plotQA' -> 'plotQA', 'findNeedle' -> 'needle'."""
    name = re.sub(r"^\d+_", "", name)
    return ALIASES.get(name, name)


def task_dirs(data_dir: Path, task: str) -> tuple[Path, ...]:
    """Existing video folders of a task: video/<N>_<task>/ or video/<task>/ (any media dir)."""
    found = []
    for sub in MEDIA_DIRS:
        base = data_dir / sub if sub else data_dir
        if base.is_dir():
            found += [p for p in sorted(base.iterdir()) if p.is_dir() and task_name(p.name) == task]
    return tuple(found)


def build_prompt(question: str, candidates: Sequence[str]) -> str:
    """The official user prompt: Question, Options as "(A) ...", "Only give the best option."."""
    lines = [f"Question: {question}", "Options:"]
    lines += [f"({LETTERS[i]}) {c}" for i, c in enumerate(candidates)]
    return "\n".join(lines) + "\n" + POST_PROMPT


def _video_path(media: MediaIndex, name: str, folders: Sequence[Path]) -> str:
    if "/" in name and (media.root / name).is_file():  # already a path under the root
        return str((media.root / name).resolve())
    for folder in folders:
        if (folder / name).is_file():
            return str((folder / name).resolve())
    if folders:  # the task has its own folder: never fall back to a same-named other video
        return str(folders[0] / name)
    found = media.find(name)
    return str(found.resolve()) if found else media.expected(name)


def record_to_sample(
    record: dict,
    *,
    source: str,
    media: MediaIndex,
    task: str,
    index: int,
    folders: Sequence[Path] = (),
) -> Sample:
    """One official JSON record (answer = option text) as a Sample; ``folders``: task_dirs()."""
    rid = f"{task}_{index}"
    if not isinstance(record, dict):
        raise RecordError(source, rid, f"record is not an object: {record!r}")
    missing = [f for f in ("video", "question", "answer") if record.get(f) in (None, "")]
    if missing:
        raise RecordError(source, rid, f"missing field(s) {', '.join(missing)}")
    question, answer, video = str(record["question"]), str(record["answer"]), str(record["video"])
    extra: dict = {"system_prompt": SYSTEM_PROMPT, "duration": record.get("duration")}
    kind, target, options = "open_ended", answer, ()
    if task not in GENERATION_TASKS:
        candidates = record.get("candidates")
        if not isinstance(candidates, list) or not 2 <= len(candidates) <= len(LETTERS):
            raise RecordError(
                source, rid, f"candidates must be a list of 2-8 texts: {candidates!r}"
            )
        candidates = [str(c) for c in candidates]
        golds = [LETTERS[i] for i, c in enumerate(candidates) if c == answer]
        if not golds:
            raise RecordError(source, rid, f"answer {answer!r} is not among the candidates")
        if len(golds) > 1:  # the official qa_template keeps the last candidate equal to the answer
            extra["ambiguous_gold"] = golds
        extra["answer_prefill"] = ANSWER_PREFILL
        kind, target = "multiple_choice", golds[-1]
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


def split_embedded(question: str) -> tuple[str, list[str]]:
    """A mirror question with "(A) ..." lines -> (the question alone, the option texts)."""
    lines = question.strip().split("\n")
    first = next((i for i, line in enumerate(lines) if _OPTION.match(line)), len(lines))
    options: list[str] = []
    for line in lines[first:]:
        match = _OPTION.match(line)
        if match and len(options) < len(LETTERS) and match.group(1) == LETTERS[len(options)]:
            options.append(match.group(2).strip())
        elif options and line.strip():
            options[-1] += " " + line.strip()  # an option wrapped onto a second line
    stem = [line for line in lines[:first] if line.strip()]
    if stem and stem[-1].strip().rstrip(":").lower() == "options":
        stem.pop()
    return re.sub(r"^Question:\s*", "", "\n".join(stem).strip()), options


def parquet_record_to_sample(
    record: dict, *, source: str, media: MediaIndex, index: int, folders: Sequence[Path] = ()
) -> Sample:
    """One ``sy1998/MLVU_dev`` row (options inside the question, letter answer) as a Sample."""
    task = task_name(str(record.get("task_type") or record.get("question_type") or "?"))
    rid = f"{task}_{index}"
    video = record.get("video_name") or record.get("video")
    if not video or not record.get("question") or not record.get("answer"):
        raise RecordError(source, rid, "missing field(s) among video_name, question, answer")
    question, candidates = split_embedded(str(record["question"]))
    if len(candidates) < 2:
        raise RecordError(source, rid, "no '(A) ...' options found in the question")
    letter = str(record["answer"]).strip().strip("()").strip()[:1]
    if letter not in LETTERS[: len(candidates)]:
        raise RecordError(source, rid, f"answer {record['answer']!r} is not an option letter")
    as_json = {
        "video": video,
        "question": question,
        "candidates": candidates,
        "answer": candidates[LETTERS.index(letter)],
        "duration": record.get("duration"),
    }
    sample = record_to_sample(
        as_json, source=source, media=media, task=task, index=index, folders=folders
    )
    return dataclasses.replace(sample, target=letter)  # the row's own letter is the gold


def _json_files(data_dir: Path) -> list[Path]:
    for folder in (data_dir / "json", data_dir):
        found = [p for p in folder.glob("*.json") if re.match(r"^\d+_", p.name)]
        if found:
            return sorted(found, key=lambda p: int(p.name.split("_")[0]))
    return []


def _parquet_files(data_dir: Path) -> list[Path]:
    for folder in (data_dir / "mlvu", data_dir, data_dir / "data"):
        found = sorted(folder.glob("test-*.parquet"))
        if found:
            return found
    return []


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
    folders = task_dirs(media.root, task)
    for index, record in enumerate(records):
        try:
            samples.append(
                record_to_sample(
                    record, source=str(path), media=media, task=task, index=index, folders=folders
                )
            )
        except RecordError as err:
            errors.append(err)


def load(data_dir: Path, *, tasks: Iterable[str] = MC_TASKS) -> LoadResult:
    """The requested tasks (default: the 7 multiple-choice ones) from whichever format exists."""
    data_dir = Path(data_dir).resolve()
    wanted = {task_name(t) for t in tasks}
    media = MediaIndex(data_dir)
    samples: list[Sample] = []
    errors: list[RecordError] = []
    json_files = _json_files(data_dir)
    files = [p for p in json_files if task_name(p.stem) in wanted]
    fmt = "json"
    if json_files:
        for path in files:
            _json_samples(path, media, samples, errors)
    else:
        fmt, files = "parquet", _parquet_files(data_dir)
        if not files:
            raise FileNotFoundError(
                f"no MLVU annotations under {data_dir}: expected json/<N>_<task>.json "
                "(official) or mlvu/test-*.parquet (sy1998/MLVU_dev)"
            )
        counters: dict[str, int] = {}
        folders = {t: task_dirs(data_dir, t) for t in wanted}
        for path in files:
            for record in read_parquet(path):
                task = task_name(str(record.get("task_type") or record.get("question_type")))
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
    missing = list(dict.fromkeys(s.media for s in samples if not Path(s.media).is_file()))
    found = {s.categories["task"] for s in samples}
    notes = {"format": fmt, "tasks": sorted(wanted), "tasks_without_items": sorted(wanted - found)}
    return LoadResult(samples, errors, missing, [str(p) for p in files], notes)


TASK = Task(
    name="mlvu",
    load=load,
    score=score,
    aggregate=aggregate,
    primary="m_avg",
    profiles=("official", "vlmevalkit"),
    category_fields=("task",),
    description=(
        "MLVU dev, the 7 multiple-choice tasks: MLVU's own letter check; M-Avg is the macro "
        "mean of per-task accuracies (official) or VLMEvalKit's micro mean (vlmevalkit)."
    ),
)
