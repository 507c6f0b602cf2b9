"""Read a question typed in a chat: which video it names, the question, its options.

The convention, as a user types it in Agent Chat UI or Studio: the first message names the
media and asks, e.g. ``assets/demo/needle.mp4 What colour is the circle?``. The first
whitespace-separated word that resolves to a file or folder under a media root is the video
(quotes around it are fine); the rest of the text is the question. Lines such as ``A. red``
or ``(B) blue`` make it a multiple-choice question. Follow-up messages on the thread are
questions about the same video. Which paths may be opened is `graphs.admission`'s rule.
"""

from __future__ import annotations

import re

from agents.question import Question
from graphs.admission import MediaRefused

__all__ = ["MediaRefused", "message_text", "split_question"]

_OPTION = re.compile(r"^\s*\(?([A-J])[.):]\s+(\S.*)$")


def message_text(content) -> str:
    """The text of a LangChain message's content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    return "\n".join(
        part.get("text", "") if isinstance(part, dict) else str(part) for part in content or ()
    )


def split_question(text: str) -> Question:
    """The question and its option lines ("A. red" -> "A. red"), in order; multiple choice
    with two options or more, else open-ended."""
    lines = text.strip().splitlines()
    options = [m for m in (_OPTION.match(line) for line in lines) if m]
    letters = "".join(m[1] for m in options)
    if len(options) >= 2 and letters == "ABCDEFGHIJ"[: len(letters)]:
        stem = [line for line in lines if not _OPTION.match(line)]
        return Question(
            " ".join(" ".join(stem).split()),
            tuple(f"{m[1]}. {m[2].strip()}" for m in options),
            kind="multiple_choice",
        )
    return Question(" ".join(text.split()), kind="open_ended")
