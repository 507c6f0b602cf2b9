"""Misread notes: a sub-agent's note with one fact read wrong (a colour, a shape or a time).

The board study's note noise (``evals.note_noise``) puts such notes on the board, the
verifier's benchmark (``bench/nano_verifier.py``) asks whether the verify gate rejects them,
and paravt-nano's training data (``training.nano``) shows its verifier what a wrong note is.
A misread changes one fact of the note's first sighting and keeps the note's own wording
and consistency (a colour read wrong is wrong wherever the note repeats it), so the note
reads like one a sub-agent could have written:

- ``colour``: every mention of the sighting's colour becomes another of the benchmark's;
- ``shape``: every mention of its shape becomes another shape;
- ``time``: its span moves to frames of the window that do not show it (the same number of
  frames, when they fit), or, in a window too short for that, past the window's end.

A note without a colour, a shape or a time it can change (``No coloured shapes.``) comes
back unchanged, with ``None`` for what was changed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from agents.benchmark import COLOURS, SHAPES

KINDS = ("colour", "shape", "time")
#: A span as notes write it ("from 94 to 99 seconds"): the first frame that shows a sighting,
#: and the frame after its last (or the window's end).
SPAN = re.compile(r"\bfrom (\d+(?:\.\d+)?) to (\d+(?:\.\d+)?) seconds")


def _num(x: float) -> str:
    return f"{x:g}"


def _words(note: str, vocabulary: Sequence[str]) -> list[str]:
    """The vocabulary's words the note mentions, in the order it first mentions them."""
    found = sorted(
        (m.start(), w) for w in vocabulary if (m := re.search(rf"\b{w}\b", note, re.IGNORECASE))
    )
    return [w for _, w in found]


def _swap_word(note: str, old: str, new: str) -> str:
    return re.sub(rf"\b{old}\b", new, note)


def _moved_span(
    start: float, end: float, times: Sequence[float], window_end: float, rng: random.Random
) -> tuple[float, float]:
    """A span of the window's frames as long (in frames) as [start, end) that does not
    overlap it; past the window when no such frames exist."""
    grid = [*sorted(times), window_end]
    frames = [t for t in grid[:-1] if start <= t < end]
    length = max(1, len(frames))
    choices = []
    for i in range(len(grid) - length):
        a, b = grid[i], grid[i + length]
        if b <= start or a >= end:
            choices.append((a, b))
    if choices:
        return rng.choice(choices)
    width = max(end - start, 1.0)
    return window_end + width, window_end + 2 * width


def misread(
    note: str,
    kind: str,
    rng: random.Random,
    *,
    times: Sequence[float] = (),
    window_end: float | None = None,
) -> tuple[str, str | None]:
    """(the note with one fact of `kind` read wrong, `kind` or None when nothing could
    change). `times` are the window's frame times and `window_end` its end, for a time.

    >>> note = "Seen: blue circle from 94 to 99 seconds; the circle is blue."
    >>> misread(note, "colour", random.Random(0))[0]
    'Seen: green circle from 94 to 99 seconds; the circle is green.'
    >>> misread(note, "time", random.Random(0), times=[90, 94, 99, 104, 109], window_end=114)
    ('Seen: blue circle from 109 to 114 seconds; the circle is blue.', 'time')
    >>> misread("No coloured shapes.", "shape", random.Random(0))
    ('No coloured shapes.', None)
    """
    if kind not in KINDS:
        raise ValueError(f"unknown misread {kind!r}; known: {', '.join(KINDS)}")
    if kind in ("colour", "shape"):
        vocabulary = COLOURS if kind == "colour" else SHAPES
        said = _words(note, vocabulary)
        if not said:
            return note, None
        old = said[0]
        new = rng.choice([w for w in vocabulary if w not in said])
        return _swap_word(note, old, new), kind
    span = SPAN.search(note)
    if span is None:
        return note, None
    start, end = float(span[1]), float(span[2])
    last = window_end if window_end is not None else end
    a, b = _moved_span(start, end, times, last, rng)
    moved = f"from {_num(a)} to {_num(b)} seconds"
    return note[: span.start()] + moved + note[span.end() :], kind


def misreadable(note: str) -> bool:
    """Whether the note states a fact a misread can change (a sighting).

    >>> misreadable("No coloured shapes."), misreadable("Seen: red cross from 3 to 5 seconds.")
    (False, True)
    """
    return bool(_words(note, COLOURS) or _words(note, SHAPES) or SPAN.search(note))
