"""The verify gate's request and its verdict: is a note supported by the pixels it came from?"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

Verdict = Literal["SUPPORTED", "UNSUPPORTED", "UNCERTAIN"]
VERDICTS: tuple[Verdict, ...] = ("SUPPORTED", "UNSUPPORTED", "UNCERTAIN")
MAX_VERDICT_TOKENS = 4

#: What stands on either side of the note in the request: training finds the note by them
#: (``training.nano.claims``, ``training.nano.sampler``), so they are named once, here.
NOTE_OPEN, NOTE_CLOSE = "\nNote: ", "\nIs everything"
_WORD = re.compile(r"[A-Za-z]+")


def verify_messages(
    frames: Mapping[str, Any], *, question: str, claim: str
) -> list[dict[str, Any]]:
    """A tiny deterministic check: the frames, the question and the claim; one word back."""
    instruction = (
        "Check a note another agent wrote about these frames.\n"
        f"Question being answered: {question.strip()}{NOTE_OPEN}{claim.strip()}{NOTE_CLOSE}"
        " the note states visible in the frames? Reply with exactly one word: "
        "SUPPORTED, UNSUPPORTED or UNCERTAIN."
    )
    return [
        {"role": "system", "content": "You check claims against images. Reply with one word."},
        {"role": "user", "content": [dict(frames), {"type": "text", "text": instruction}]},
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
