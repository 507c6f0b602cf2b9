"""Read a question typed in a chat: which video it names, the question, its options.

The convention, as a user types it in Agent Chat UI or Studio: the first message names the
media and asks, e.g. ``assets/demo/needle.mp4 What colour is the circle?``. The first
whitespace-separated word that resolves to a file or folder under a media root is the video
(quotes around it are fine); the rest of the text is the question. Lines such as ``A. red``
or ``(B) blue`` make it a multiple-choice question. Follow-up messages on the thread are
questions about the same video. Nothing is fetched from a URL, and a path outside the media
roots is refused with a message that names the roots.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_OPTION = re.compile(r"^\s*\(?([A-J])[.):]\s+(\S.*)$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_QUOTES = "\"'`‘’“”<>()[],;"


class MediaRefused(ValueError):
    """The chat names no usable media, or media the graph may not open; says what to do."""


@dataclass(frozen=True)
class ChatQuestion:
    question: str
    options: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return "multiple_choice" if self.options else "open_ended"


def message_text(content) -> str:
    """The text of a LangChain message's content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    return "\n".join(
        part.get("text", "") if isinstance(part, dict) else str(part) for part in content or ()
    )


def split_question(text: str) -> ChatQuestion:
    """The question and its option lines ("A. red" -> "A. red"), in order."""
    lines = text.strip().splitlines()
    options = [m for m in (_OPTION.match(line) for line in lines) if m]
    letters = "".join(m[1] for m in options)
    if len(options) >= 2 and letters == "ABCDEFGHIJ"[: len(letters)]:
        stem = [line for line in lines if not _OPTION.match(line)]
        return ChatQuestion(
            " ".join(" ".join(stem).split()), tuple(f"{m[1]}. {m[2].strip()}" for m in options)
        )
    return ChatQuestion(" ".join(text.split()))


def inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def resolve_media(word: str, roots: Sequence[Path]) -> Path | None:
    """The file or folder ``word`` names under a root; MediaRefused for a URL or a path that
    exists outside every root; None when it names nothing."""
    word = word.strip(_QUOTES)
    if not word:
        return None
    if _URL.match(word):
        raise MediaRefused(
            f"{word} is a URL: nothing is fetched from the network. Put the video under "
            f"{_roots_text(roots)} and name its path."
        )
    candidate = Path(word).expanduser()
    places = [candidate] if candidate.is_absolute() else [root / candidate for root in roots]
    for place in places:
        try:
            resolved = place.resolve()
        except (OSError, RuntimeError):
            continue
        if not resolved.exists():
            continue
        if not inside(resolved, roots):
            raise MediaRefused(
                f"{word} is outside the media roots ({_roots_text(roots)}): the graph only "
                "opens media under them (set PARAVT_MEDIA_ROOTS to add a folder)."
            )
        return resolved
    return None


def named_media(text: str, roots: Sequence[Path]) -> tuple[Path | None, str]:
    """(the first path the text names under a root, the text without it)."""
    words = text.split()
    for position, word in enumerate(words):
        found = resolve_media(word, roots)
        if found is not None:
            rest = words[:position] + words[position + 1 :]
            return found, text.replace(word, "", 1).strip() if rest else ""
    return None, text


def checked_video(path: str, roots: Sequence[Path]) -> Path:
    """A video named outside a message (the ``video`` field, an assistant's context)."""
    found = resolve_media(path, roots)
    if found is None:
        roots_text = _roots_text(roots)
        raise MediaRefused(f"no file or folder {path!r} under the media roots ({roots_text})")
    return found


def _roots_text(roots: Sequence[Path]) -> str:
    return ", ".join(str(r) for r in roots)


NO_VIDEO = (
    "Which video should I look at? Start your first message with its path, for example "
    "`assets/demo/needle.mp4 What colour is the circle?` (the path may be a video, a folder "
    "of page images, or an image, under {roots})."
)


def no_video_message(roots: Sequence[Path]) -> str:
    return NO_VIDEO.format(roots=_roots_text(roots))
