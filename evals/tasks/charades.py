"""Charades-STA (test): load the original text annotations or the HF parquet.

On disk, in order of preference (``notes["format"]`` says which was read)::

    <data_dir>/charades_sta_test.txt     lines "VIDEOID START END##sentence" (3,720 queries)
    <data_dir>/data/test-*.parquet       HF lmms-eval/charades_sta (formerly lmms-lab/
                                         charades_sta; both resolve): video, caption, timestamp
    <data_dir>/{Charades_v1_480,data,videos,video,.}/<VIDEOID>.mp4   (``media_dir`` first)

The parquet stores timestamps as float16 (24.3 reads back as 24.296875), so the text file wins
when both exist; with the parquet, ``notes["timestamps"]`` is "float16" and the gold interval
is the float16 value as stored (what lmms-eval scores against).

Prompt: lmms-eval's Charades prompt gives "24.3 - 30.4" seconds for "person turn a light on"
as its format example, which is a real test query and its gold answer, so the default prompt
here states the format without an example. ``prompt="lmms_eval"`` reproduces theirs exactly.
Ids are ``<VIDEOID>_<n>``, n the query's position in the file (same in both formats).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

from evals.formats import read_parquet
from evals.media import MEDIA_DIRS, MediaIndex
from evals.sample import RecordError, Sample
from evals.scorers.charades import DEFAULT, PROFILES, aggregate, score
from evals.tasks.base import LoadResult, Task

# ----------------------------------------------------------------------------- loading

TEXT_FILE = "charades_sta_test.txt"
MEDIA_SUBDIRS = ("Charades_v1_480", *MEDIA_DIRS)
PROMPTS = {
    "default": (
        'Find the moment in the video when this event happens: "{sentence}". '
        'Answer with its start and end time in seconds, as "start - end".'
    ),
    "lmms_eval": (
        "Please find the visual event described by a sentence in the video, determining its "
        "starting and ending times. The format should be: 'The event happens in the start time "
        "- end time'. For example, The event 'person turn a light on' happens in the 24.3 - 30.4 "
        "seonds. Now I will give you the textual sentence: {sentence}. Please return its start "
        "time and end time."
    ),
}
PromptStyle = Literal["default", "lmms_eval"]


def parse_line(line: str, *, source: str, index: int) -> dict:
    """'3MSZA 24.3 30.4##person turn a light on.' -> {video, start, end, sentence}."""
    head, sep, sentence = line.partition("##")
    parts = head.split()
    rid = f"{parts[0] if parts else '?'}_{index}"
    if not sep or len(parts) != 3:
        raise RecordError(source, rid, f"expected 'VIDEOID START END##sentence', got {line!r}")
    return {"video": parts[0], "start": parts[1], "end": parts[2], "sentence": sentence}


def record_to_sample(
    record: dict,
    *,
    source: str,
    media: MediaIndex,
    index: int,
    prompt: PromptStyle = "default",
) -> Sample:
    """A text-file record ({video, start, end, sentence}) or a parquet row
    ({video, caption, timestamp}) as a grounding Sample with gold {"start", "end"} in extra."""
    video = Path(str(record.get("video") or "")).stem
    rid = f"{video or '?'}_{index}"
    sentence = str(record.get("sentence") or record.get("caption") or "").strip()
    bounds = record.get("timestamp")
    if bounds is None:
        bounds = (record.get("start"), record.get("end"))
    if not video or not sentence:
        raise RecordError(source, rid, "missing video or sentence")
    try:
        start, end = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise RecordError(source, rid, f"bad timestamps {bounds!r}") from None
    if not (math.isfinite(start) and math.isfinite(end)) or start < 0:
        raise RecordError(source, rid, f"bad timestamps {start!r}, {end!r}")
    if start >= end:
        raise RecordError(source, rid, f"start {start} is not before end {end}")
    found = media.find(f"{video}.mp4")
    text = sentence.rstrip(".").strip()
    expected = media.root / MEDIA_SUBDIRS[0] / f"{video}.mp4"
    return Sample(
        id=rid,
        media=str(found.resolve()) if found else media.describe_missing(expected, f"{video}.mp4"),
        question=sentence,
        prompt=PROMPTS[prompt].format(sentence=text),
        kind="grounding",
        target=f"{start}-{end}",
        cluster=video,
        extra={
            "start": start,
            "end": end,
            "caption": str(record.get("sentence") or record.get("caption")),
        },
    )


def _sources(data_dir: Path) -> tuple[str, list[Path]]:
    for path in (data_dir / TEXT_FILE, data_dir / "data" / TEXT_FILE):
        if path.is_file():
            return "text", [path]
    for folder in (data_dir / "data", data_dir):
        files = sorted(folder.glob("test-*.parquet"))
        if files:
            return "parquet", files
    raise FileNotFoundError(
        f"no Charades-STA annotations under {data_dir}: expected {TEXT_FILE} "
        "or data/test-*.parquet (lmms-eval/charades_sta, formerly lmms-lab/charades_sta)"
    )


def load(
    data_dir: Path, *, prompt: PromptStyle = "default", media_dir: str | Path | None = None
) -> LoadResult:
    """Every query; the text file is preferred over the float16 parquet."""
    if prompt not in PROMPTS:
        raise ValueError(f"prompt must be one of {sorted(PROMPTS)}, got {prompt!r}")
    data_dir = Path(data_dir).resolve()
    fmt, files = _sources(data_dir)
    media = MediaIndex(data_dir, MEDIA_SUBDIRS, media_dir=media_dir)
    samples, errors = [], []
    index = 0
    for path in files:
        if fmt == "text":
            lines = path.read_text(encoding="utf-8").splitlines()
            records = [line for line in lines if line.strip()]
        else:
            records = read_parquet(path)
        for record in records:
            try:
                if isinstance(record, str):
                    record = parse_line(record, source=str(path), index=index)
                sample = record_to_sample(
                    record, source=str(path), media=media, index=index, prompt=prompt
                )
            except RecordError as err:
                errors.append(err)
            else:
                samples.append(sample)
            index += 1
    missing = list(dict.fromkeys(s.media for s in samples if not Path(s.media).is_file()))
    notes = {
        "format": fmt,
        "timestamps": "float16" if fmt == "parquet" else "text",
        "prompt": prompt,
    }
    return LoadResult(samples, errors, missing, [str(p) for p in files], notes)


TASK = Task(
    name="charades",
    load=load,
    score=score,
    aggregate=aggregate,
    profiles=PROFILES,
    default_profile=DEFAULT,
    description=(
        "Charades-STA test: temporal grounding, R@1 at IoU 0.3/0.5/0.7 and mIoU (x100); "
        "lmms_eval reads replies with lmms-eval's eval_tvg.py parser."
    ),
)
