"""Charades-STA (test): load the original text annotations or the HF parquet (scoring below).

On disk, in order of preference (``notes["format"]`` says which was read)::

    <data_dir>/charades_sta_test.txt     lines "VIDEOID START END##sentence" (3,720 queries)
    <data_dir>/data/test-*.parquet       lmms-lab/charades_sta: video, caption, timestamp
    <data_dir>/{Charades_v1_480,data,videos,video,.}/<VIDEOID>.mp4

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
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from agents.scoring.extract import extract_answer
from agents.scoring.intervals import iou, parse_interval, recall_at
from evals.formats import read_parquet
from evals.media import MEDIA_DIRS, MediaIndex
from evals.sample import RecordError, Sample
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
    return Sample(
        id=rid,
        media=str(found.resolve())
        if found
        else str(media.root / MEDIA_SUBDIRS[0] / f"{video}.mp4"),
        question=sentence,
        prompt=PROMPTS[prompt].format(sentence=text),
        kind="grounding",
        target=f"{start}-{end}",
        cluster=video,
        extra={"start": start, "end": end},
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
        "or data/test-*.parquet (lmms-lab/charades_sta)"
    )


def load(data_dir: Path, *, prompt: PromptStyle = "default") -> LoadResult:
    """Every query; the text file is preferred over the float16 parquet."""
    if prompt not in PROMPTS:
        raise ValueError(f"prompt must be one of {sorted(PROMPTS)}, got {prompt!r}")
    data_dir = Path(data_dir).resolve()
    fmt, files = _sources(data_dir)
    media = MediaIndex(data_dir, MEDIA_SUBDIRS)
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


# ----------------------------------------------------------------------------- scoring
#
# The interval is read from the answer text of the turn (agents.scoring.extract_answer) and
# scored by IoU with the gold [start, end] in ``extra``; a reply with no interval has IoU 0.
# R@1 at IoU >= 0.3/0.5/0.7 and mIoU are reported x100, as the literature does. The
# profiles differ only in how the interval is read:
#
# - official: this project's parser (agents.scoring.intervals.parse_interval): "a - b",
#   "a to b", "mm:ss" and "hh:mm:ss", units, brackets, start/end phrases; a reversed pair is
#   swapped. (Charades-STA ships no reference parser for free-text replies.)
# - lmms_eval: a port of ``extract_time`` from lmms-eval's ``tasks/charades_sta/eval_tvg.py``
#   (lmms-eval only writes a submission file; that script scores it). Its quirks are kept:
#   every "to" becomes "-" (inside words too), the first "a - b" of plain numbers wins (so
#   "1:05 - 1:12" reads as 5 - 1, swapped to 1 - 5), else the first numbers of the first two
#   sentences naming a start or end. Its last fallback (hh:mm:ss in such sentences) is left
#   out: it can never yield a pair, as every sentence it reads already gave the step before
#   a number (and it reads a regex group tuple as a time string). Where the script would
#   crash (float("1..2")) the reply counts as unparsed here. Against the float16 gold
#   of the HF parquet (what lmms-eval scores against) load that format; see ``notes``.

THRESHOLDS = (0.3, 0.5, 0.7)
_TVG_EXAMPLE = "a specific example is : 20.8 - 30.0 seconds"
_TVG_KEYWORDS = ("starts", "ends", "happens in", "start time", "end time", "start", "end", "happen")
_TVG_PAIR = re.compile(r"(\d+\.*\d*)\s*-\s*(\d+\.*\d*)")
_TVG_NUMBER = re.compile(r"\b(\d+\.\d+\b|\b\d+)\b")


def _pairs(times: list[float]) -> list[tuple[float, float]]:
    times = times[: len(times) // 2 * 2]
    return [(times[i], times[i + 1]) for i in range(0, len(times), 2)]


def lmms_eval_interval(text: str) -> tuple[float, float] | None:
    """lmms-eval's ``extract_time`` (eval_tvg.py): the first pair it finds, ordered, or None.

    >>> lmms_eval_interval("The event happens in the 12.5 - 20.0 seconds.")
    (12.5, 20.0)
    >>> lmms_eval_interval("from 1:05 to 1:12")  # "to" -> "-", then "05 - 1"
    (1.0, 5.0)
    >>> lmms_eval_interval("12.4, 20.0.") is None
    True
    """
    paragraph = text.lower().replace(_TVG_EXAMPLE, "").replace("to", "-")
    sentences = re.split(r"[!?\n]", paragraph)
    candidates = [s for s in sentences if any(k in s for k in _TVG_KEYWORDS)]
    try:
        found = [(float(a), float(b)) for a, b in _TVG_PAIR.findall(paragraph)]
        if not found:
            firsts = (_TVG_NUMBER.findall(s) for s in candidates)
            found = _pairs([float(hit[0]) for hit in firsts if hit])
    except ValueError:  # "1..2" matches the upstream pattern but is no float
        return None
    if not found:
        return None
    start, end = found[0]
    return (start, end) if end > start else (end, start)


PARSERS: dict[str, Callable[[str], tuple[float, float] | None]] = {
    "official": parse_interval,
    "lmms_eval": lmms_eval_interval,
}
"""Profile -> (answer text) -> [start, end] seconds or None."""


def _parser(profile: str) -> Callable[[str], tuple[float, float] | None]:
    try:
        return PARSERS[profile]
    except KeyError:
        known = ", ".join(PARSERS)
        raise ValueError(f"charades has no profile {profile!r}; known: {known}") from None


def score(response: str, sample: Sample, profile: str = "official") -> dict[str, float]:
    """IoU with the gold interval and the R@1 hits at 0.3/0.5/0.7, for one turn.

    >>> s = Sample("3MSZA_0", "", "q", "p", "grounding", "24.3-30.4",
    ...            extra={"start": 24.3, "end": 30.4})
    >>> score("<think>The light goes on late.</think><answer>24.3 - 30.4</answer>", s)
    {'score': 1.0, 'iou': 1.0, 'r@0.3': 1.0, 'r@0.5': 1.0, 'r@0.7': 1.0}
    """
    found = _parser(profile)(extract_answer(response))
    overlap = iou(found, (sample.extra["start"], sample.extra["end"])) if found else 0.0
    return {
        "score": overlap,
        "iou": overlap,
        **{f"r@{t}": float(overlap >= t) for t in THRESHOLDS},
    }


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = "official"
) -> dict[str, float]:
    """``r1@0.3``, ``r1@0.5``, ``r1@0.7`` and ``miou``, all x100 (NaN for no items).

    >>> aggregate([], [{"iou": 0.75}, {"iou": 0.375}, {"iou": 0.0}, {"iou": 0.5}])
    {'r1@0.3': 75.0, 'r1@0.5': 50.0, 'r1@0.7': 25.0, 'miou': 40.625}
    """
    _parser(profile)
    ious = [m["iou"] for m in metrics]
    out = {}
    for t in THRESHOLDS:
        share = recall_at(ious, t)
        out[f"r1@{t}"] = 100 * share if share is not None else math.nan
    out["miou"] = 100 * sum(ious) / len(ious) if ious else math.nan
    return out


TASK = Task(
    name="charades",
    load=load,
    score=score,
    aggregate=aggregate,
    primary="miou",
    profiles=("official", "lmms_eval"),
    description=(
        "Charades-STA test: temporal grounding, R@1 at IoU 0.3/0.5/0.7 and mIoU (x100); "
        "lmms_eval reads replies with lmms-eval's eval_tvg.py parser."
    ),
)
