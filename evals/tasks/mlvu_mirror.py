"""The ``sy1998/MLVU_dev`` parquet mirror: rows whose question embeds the options as "(A) ..."
lines and whose answer is a letter, read as records in the official JSON shape."""

from __future__ import annotations

import re
from pathlib import Path

from evals.sample import RecordError
from evals.scorers.mlvu import LETTERS

_OPTION = re.compile(r"^\s*\(([A-H])\)\s?(.*)$")


def parquet_files(data_dir: Path) -> list[Path]:
    """``mlvu/test-*.parquet`` (or at the top, or in data/)."""
    for folder in (data_dir / "mlvu", data_dir, data_dir / "data"):
        found = sorted(folder.glob("test-*.parquet"))
        if found:
            return found
    return []


def row_task(row: dict) -> str:
    """The row's task label as the mirror spells it (``plotQA``, ``subPlot``, ...)."""
    return str(row.get("task_type") or row.get("question_type") or "?")


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


def row_to_record(row: dict, *, source: str, rid: str) -> tuple[dict, str]:
    """(the row as an official JSON record, the row's own gold letter)."""
    video = row.get("video_name") or row.get("video")
    if not video or not row.get("question") or not row.get("answer"):
        raise RecordError(source, rid, "missing field(s) among video_name, question, answer")
    question, candidates = split_embedded(str(row["question"]))
    if len(candidates) < 2:
        raise RecordError(source, rid, "no '(A) ...' options found in the question")
    letter = str(row["answer"]).strip().strip("()").strip()[:1]
    if letter not in LETTERS[: len(candidates)]:
        raise RecordError(source, rid, f"answer {row['answer']!r} is not an option letter")
    record = {
        "video": video,
        "question": question,
        "candidates": candidates,
        "answer": candidates[LETTERS.index(letter)],
        "duration": row.get("duration"),
    }
    return record, letter
