"""Temporal-grounding readers and IoUs of the reference harnesses, each reproduced exactly.

A reader returns what its harness extracts from the text it reads: a list of at most one
``[start, end]`` pair (lmms-eval's shape) or None. The project's own reader is
:func:`agents.scoring.intervals.parse_interval`.
"""

from __future__ import annotations

import re

_EXAMPLE = "a specific example is : 20.8 - 30.0 seconds"
_KEYWORDS = ("starts", "ends", "happens in", "start time", "end time", "start", "end", "happen")
_RANGE = re.compile(r"(\d++(?:\.\d++)?+)\s*+[–-]\s*+(\d++(?:\.\d++)?+)")
_NUMBER = re.compile(r"\b(\d+(?:\.\d+)?)\b")
_CLOCK_HMS = re.compile(r"\b(\d{1,2}:\d{2}:\d{2})\b")
_SPAN_S = re.compile(r"(\d++(?:\.\d++)?+)\s*+s?+\s*+[–-]\s*+(\d++(?:\.\d++)?+)\s*+s?+")
_CLOCK_RANGE = re.compile(r"\b(\d{1,2}:\d{2}(?::\d{2})?)\s*[–-]\s*(\d{1,2}:\d{2}(?::\d{2})?)\b")
_CLOCK = re.compile(r"\b(\d{1,2}:\d{2}(?::\d{2})?)\b")

# The references' patterns, made possessive (*+, ++, ?+): each group can only end where the
# pattern goes on (a space or a dash, never a digit or a dot), so no backtracking changes a
# match, and a long run of digits costs linear time, not cubic (minutes per reply before).

Pairs = list[list[float]]


def _sentences(text: str) -> list[str]:
    """The reply lowered, its format example dropped, every "to" made "-" (inside words too),
    split at ! ? and newlines."""
    text = text.lower().replace(_EXAMPLE, "").replace("to", "-")
    return re.split(r"[!?\n]", text)


def _keyed(sentences: list[str]) -> list[str]:
    return [s for s in sentences if any(k in s for k in _KEYWORDS)]


def _first_ranges(pattern: re.Pattern[str], sentences: list[str], convert) -> Pairs:
    for sentence in sentences:
        hits = pattern.findall(sentence)
        if hits:
            return [[convert(a), convert(b)] for a, b in hits]
    return []


def _paired(times: list[float]) -> Pairs:
    times = times[: len(times) // 2 * 2]
    return [[times[i], times[i + 1]] for i in range(0, len(times), 2)]


def _ordered_first(found: Pairs) -> Pairs:
    return [[s, e] if e > s else [e, s] for s, e in found[:1]]


def tvg_script_times(reply: str) -> Pairs:
    """``extract_time`` of lmms-eval's ``tasks/charades_sta/eval_tvg.py`` (2c08ee5, unchanged
    at 75571cf). Only sentences with a start/end/happen keyword are read: the first with a
    "a - b" range, else the first number of each such sentence in pairs, else their
    hh:mm:ss times in pairs, else "a s - b s" ranges; the first pair, ordered.

    >>> tvg_script_times("The event happens in the 12.5 - 20.0 seconds.")
    [[12.5, 20.0]]
    >>> tvg_script_times("12.5 - 20.0"), tvg_script_times("from 1:05 to 1:12")
    ([], [])
    """
    candidates = _keyed(_sentences(reply))
    found = _first_ranges(_RANGE, candidates, float)
    if not found:
        firsts = [_NUMBER.findall(s) for s in candidates]
        found = _paired([float(hit[0]) for hit in firsts if hit])
    if not found:
        clocks = [_CLOCK_HMS.findall(s) for s in candidates]
        found = _paired([_hms_int(hit[0]) for hit in clocks if hit])
    if not found:
        found = _first_ranges(_SPAN_S, candidates, float)
    return _ordered_first(found)


def _hms_int(clock: str) -> int:
    hours, minutes, seconds = map(int, clock.split(":"))
    return hours * 3600 + minutes * 60 + seconds


def _clock_seconds(clock: str) -> float:
    parts = [float(p) for p in clock.split(":")]
    if len(parts) == 3:
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    return parts[0] * 60 + parts[1]


def lmms_charades_times(reply: str) -> Pairs:
    """``extract_time`` of lmms-eval's ``tasks/charades_sta/utils.py`` (75571cf): the same
    sentences (all of them when none has a keyword); first "mm:ss - mm:ss" ranges, then
    "a - b", then clock times in pairs, then first numbers in pairs, then "a s - b s".

    >>> lmms_charades_times("12.5 - 20.0"), lmms_charades_times("from 1:05 to 1:12")
    ([[12.5, 20.0]], [[65.0, 72.0]])
    """
    sentences = _sentences(reply)
    candidates = _keyed(sentences) or sentences
    found = _first_ranges(_CLOCK_RANGE, candidates, _clock_seconds)
    if not found:
        found = _first_ranges(_RANGE, candidates, float)
    if not found:
        found = _paired([_clock_seconds(t) for s in candidates for t in _CLOCK.findall(s)])
    if not found:
        firsts = [_NUMBER.findall(s) for s in candidates]
        found = _paired([float(hit[0]) for hit in firsts if hit])
    if not found:
        found = _first_ranges(_SPAN_S, candidates, float)
    return _ordered_first(found)


def tvg_script_iou(gold, pred) -> float | None:
    """eval_tvg.py's ``iou``: overlap over the hull; None where the script divides by zero."""
    hull = max(gold[1], pred[1]) - min(gold[0], pred[0])
    overlap = max(min(gold[1], pred[1]) - max(gold[0], pred[0]), 0)
    return None if hull == 0 else overlap / hull


def lmms_charades_iou(gold, pred) -> float:
    """lmms-eval 75571cf's ``iou``: the same, 0.0 for an empty hull."""
    hull = max(gold[1], pred[1]) - min(gold[0], pred[0])
    return 0.0 if hull <= 0 else max(min(gold[1], pred[1]) - max(gold[0], pred[0]), 0) / hull


# --- ParaVT release evaluation driver ---------------------------------------------------------

_PV_CLOCK = re.compile(r"(\d++):(\d++(?:\.\d++)?+)\s*+[-–—]\s*+(\d++):(\d++(?:\.\d++)?+)")
_PV_RANGE = re.compile(r"(\d++\.?+\d*+)\s*+[-–—]\s*+(\d++\.?+\d*+)")
_PV_START = re.compile(r"(?:start(?:ing)?|begin(?:ning)?)\s*+(?:time)?+[:\s]*+(\d+\.?\d*)", re.I)
_PV_END = re.compile(r"(?:end(?:ing)?|finish(?:ing)?)\s*+(?:time)?+[:\s]*+(\d+\.?\d*)", re.I)


def paravt_times(text: str) -> list[float] | None:
    """The ParaVT driver's ``extract_time_from_response`` (paravt/eval/utils.py@cf55249):
    a ``<time>`` tag's body, then the whole reply, each tried for "m:ss - m:ss" (under an
    hour) and "a - b" (increasing); then start/end words; then the first two numbers.

    >>> paravt_times("<time>00:19.7 - 00:25.6</time>"), paravt_times("12.4, 20.0")
    ([19.7, 25.6], [12.4, 20.0])
    """
    if not text or not text.strip():
        return None
    tag = re.search(r"<time>([^<]+)</time>", text)
    for part in ([tag[1]] if tag else []) + [text]:
        clock = _PV_CLOCK.search(part)
        if clock:
            # float(), not the driver's int(): the same value under an hour (the only one
            # kept), and no ValueError on a minutes field of over 4,300 digits
            start = float(clock[1]) * 60 + float(clock[2])
            end = float(clock[3]) * 60 + float(clock[4])
            if start < end < 3600:
                return [start, end]
        plain = _PV_RANGE.search(part)
        if plain and float(plain[1]) < float(plain[2]):
            return [float(plain[1]), float(plain[2])]
    starts, ends = _PV_START.findall(text), _PV_END.findall(text)
    if starts and ends:
        return [float(starts[0]), float(ends[0])]
    numbers = re.findall(r"(\d+\.?\d*)", text)
    return [float(numbers[0]), float(numbers[1])] if len(numbers) >= 2 else None


def paravt_iou(pred, gold) -> float:
    """The driver's ``temporal_iou``: overlap over the hull, 0.0 for an empty hull."""
    overlap = max(0.0, min(pred[1], gold[1]) - max(pred[0], gold[0]))
    hull = max(pred[1], gold[1]) - min(pred[0], gold[0])
    return overlap / hull if hull > 0 else 0.0
