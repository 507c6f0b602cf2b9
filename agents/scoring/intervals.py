"""Temporal grounding: read a [start, end] pair out of free text, and score it by IoU.

Times are seconds, written as ``12.5``, ``12.5s`` / ``12.5 seconds``, ``mm:ss`` or
``hh:mm:ss`` (with optional decimals: ``00:19.7``). A pair is two times joined by ``-``,
``–``, ``—``, ``~``, ``,``, ``to``, ``until``, ``till``, ``through`` or ``and``, each time
optionally followed by a unit and wrapped in ``<...>``; failing that, a time after a
"start"/"begin" word together with one after an "end"/"finish"/"stop" word.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

_TIME = r"[-−]?(?:\d+(?::\d+){0,2}(?:\.\d+)?|\.\d+)"


def _value(name: str) -> str:
    """A time not glued to a word, a number or a clock field before it."""
    return rf"(?<![\w.:])(?P<{name}>{_TIME})"


# Possessive quantifiers (*+, ?+) keep the pattern linear on long runs of spaces.
_UNIT = r"(?:\s*+(?:seconds?|secs?|s)(?![A-Za-z]))?+\s*+[>\])]?+"
_SEP = r"\s*+(?:--?|[–—~,]|\b(?:to|until|till|through|and)\b)\s*+[<\[(]?+\s*+"
_PAIR_RE = re.compile(_value("start") + _UNIT + _SEP + _value("end"))
_START_RE = re.compile(r"\b(?:start|begin)\w*\b\D{0,20}?" + _value("t"), re.IGNORECASE)
_END_RE = re.compile(r"\b(?:end|finish|stop)\w*\b\D{0,20}?" + _value("t"), re.IGNORECASE)


def _seconds(value: str) -> float:
    """``"-1:05.5"`` -> -65.5; float() on every field, so no digit-count limit applies."""
    sign = -1.0 if value[0] in "-−" else 1.0
    total = 0.0
    for field in value.lstrip("-−").split(":"):
        total = total * 60.0 + float(field)
    return sign * total


def parse_interval(text: str) -> tuple[float, float] | None:
    """The first [start, end] pair in ``text`` as seconds, or None when there is none.

    A reversed pair is swapped. Minus signs are kept (a time just after a separator may be
    negative: "5 to -2" is (-2, 5)); :func:`iou` scores such pairs like any other, so a
    negative start is not clamped here. Times too large to be finite give None.

    >>> parse_interval("The event happens in the 12.5 - 20.0 seconds.")
    (12.5, 20.0)
    >>> parse_interval("[1:05, 1:12]")
    (65.0, 72.0)
    >>> parse_interval("from 20s to 12.4s")
    (12.4, 20.0)
    >>> parse_interval("no times here") is None
    True
    """
    pair = _PAIR_RE.search(text)
    if pair:
        start, end = _seconds(pair["start"]), _seconds(pair["end"])
    else:
        first, last = _START_RE.search(text), _END_RE.search(text)
        if not (first and last):
            return None
        start, end = _seconds(first["t"]), _seconds(last["t"])
    if not (math.isfinite(start) and math.isfinite(end)):
        return None
    return (start, end) if start <= end else (end, start)


def iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Intersection over union of two [start, end] intervals, in [0, 1].

    Each interval's ends are taken in order; 0.0 when they do not overlap (or only touch),
    so also for an empty union; 0.0 when a bound is not finite.

    >>> iou((12.5, 20.0), (15.0, 25.0))
    0.4
    >>> iou((0, 1), (2, 3)), iou((3, 3), (3, 3))
    (0.0, 0.0)
    """
    (s1, e1), (s2, e2) = sorted(a), sorted(b)
    bounds = (s1, e1, s2, e2)
    if not all(math.isfinite(x) for x in bounds):
        return 0.0
    if max(abs(x) for x in bounds) > 1e300:  # keep e - s finite
        s1, e1, s2, e2 = (x / 4 for x in bounds)
    inter = min(e1, e2) - max(s1, s2)
    if inter <= 0:
        return 0.0
    return inter / (max(e1, e2) - min(s1, s2))  # the hull is the union when they overlap


def recall_at(ious: Iterable[float], threshold: float) -> float | None:
    """Share of IoUs at or above ``threshold`` (R@1 at IoU >= 0.3/0.5/0.7, as a fraction).

    None for no IoUs at all ("cannot judge"); report x100 at the caller.

    >>> recall_at([0.8, 0.4, 0.0, 0.5], 0.5)
    0.5
    """
    values = list(ious)
    if not values:
        return None
    return sum(value >= threshold for value in values) / len(values)
