"""The verify gate's request and its verdict: is a note supported by the pixels it came from?"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from agents.misreads import SPAN

Verdict = Literal["SUPPORTED", "UNSUPPORTED", "UNCERTAIN"]
VERDICTS: tuple[Verdict, ...] = ("SUPPORTED", "UNSUPPORTED", "UNCERTAIN")
MAX_VERDICT_TOKENS = 4

#: What stands on either side of the note in the request: training finds the note by them
#: (``training.nano.claims``, ``training.nano.sampler``), so they are named once, here.
NOTE_OPEN, NOTE_CLOSE = "\nNote: ", "\nIs everything"
_WORD = re.compile(r"[A-Za-z]+")


#: The lists of a frame reference that run frame by frame (``agents.prompts.frames_part``).
_PER_FRAME = ("timestamps", "requested", "errors")


def withheld(verdict: str | None) -> bool:
    """Whether a note with this verdict is kept from the board's readers: the gate checked it
    and did not support it (None: a note no gate checked).

    >>> [withheld(v) for v in (None, "SUPPORTED", "UNSUPPORTED", "UNCERTAIN")]
    [False, False, True, True]
    """
    return verdict not in (None, "SUPPORTED")


def _spans(claim: str) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in SPAN.findall(claim)]


def cited_frames(claim: str, times: Sequence[float]) -> list[int]:
    """The indexes of the frames (at `times`) that the claim's spans point at: a frame from a
    span's start up to, not including, its end, as notes write spans. Every frame when the
    claim cites no span, or none of these frames.

    >>> times = [89, 94, 99, 104]
    >>> cited_frames("Seen: blue circle from 94 to 99 seconds; the circle is blue.", times)
    [1]
    >>> cited_frames("Seen: blue circle from 89 to 99 seconds; red cross from 104 to 109 seconds.",
    ...     times)
    [0, 1, 3]
    >>> cited_frames("A man talks.", times), cited_frames("Seen: red cross from 30 to 35 s.", times)
    ([0, 1, 2, 3], [0, 1, 2, 3])
    """
    spans = _spans(claim)
    cited = [i for i, t in enumerate(times) if any(a <= t < b or t == a for a, b in spans)]
    return cited or list(range(len(times)))


def outside_window(claim: str, start: float, end: float) -> bool:
    """Whether the claim names spans and every one lies outside the window [start, end) its
    frames came from: no frame of that window can show what it says, so no check is asked.

    >>> outside_window("Seen: blue circle from 125 to 145 seconds.", 180, 240)
    True
    >>> outside_window("Seen: blue circle from 208 to 435 seconds.", 360, 480)
    False
    >>> outside_window("No coloured shapes.", 0, 60)
    False
    """
    spans = _spans(claim)
    return bool(spans) and all(b <= start or a >= end for a, b in spans)


def cited_part(frames: Mapping[str, Any], claim: str) -> dict[str, Any]:
    """A frame reference cut down to the frames the claim cites (`cited_frames`)."""
    if "timestamps" not in frames:
        return dict(frames)
    keep = cited_frames(claim, frames["timestamps"])
    return {k: [v[i] for i in keep] if k in _PER_FRAME else v for k, v in frames.items()}


def verify_messages(
    frames: Mapping[str, Any], *, question: str, claim: str
) -> list[dict[str, Any]]:
    """A tiny deterministic check: the frames the claim cites (`cited_part`), the question and
    the claim; one word back.

    A note is checked against the frames of the times it names, so a sighting put at the wrong
    time meets frames that do not show it, and is checked as a sighting of nothing is: by what
    those frames show, not by matching its numbers with the frames' labels.
    """
    instruction = (
        "Check a note another agent wrote about these frames.\n"
        f"Question being answered: {question.strip()}{NOTE_OPEN}{claim.strip()}{NOTE_CLOSE}"
        " the note states visible in the frames? Reply with exactly one word: "
        "SUPPORTED, UNSUPPORTED or UNCERTAIN."
    )
    return [
        {"role": "system", "content": "You check claims against images. Reply with one word."},
        {
            "role": "user",
            "content": [cited_part(frames, claim), {"type": "text", "text": instruction}],
        },
    ]


def parse_verdict(text: str) -> tuple[Verdict, bool]:
    """The verdict and whether it was read cleanly; anything else counts as UNCERTAIN.

    >>> parse_verdict(" supported."), parse_verdict("Yes it is"), parse_verdict("UNSUPPORTED")
    (('SUPPORTED', True), ('UNCERTAIN', False), ('UNSUPPORTED', True))
    """
    match = _WORD.search(text)
    word = match.group(0).upper() if match else ""
    if word in VERDICTS:
        return word, True  # type: ignore[return-value]
    return "UNCERTAIN", False
