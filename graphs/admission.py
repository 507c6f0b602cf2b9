"""Which media a graph may open: one rule for every way a video arrives.

A video arrives as a path in chat text, in the ``video`` input field (alone or with the older
``question``), as ``Context.default_video``, or in a model's ``crop_video`` arguments (which
are ignored: a call always crops the run's own video, `agents.tools`). A graph compiled with
media roots is a server's (`langgraph dev`, Studio, Agent Chat UI): every one of these paths
is opened only if it lies under a root once symlinks are resolved, and a path outside is
refused in the same words whether or not a file is there, so a client learns nothing about
the rest of the disk. A graph compiled without roots belongs to a caller trusted with its own
paths (the CLI, where the user names the file; evaluation, whose loaders find media under
``--data-dir``/``--media-dir``; training): its fields may name any path, while chat text is
still read under the working folder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_QUOTES = "\"'`‘’“”<>()[],;"


class MediaRefused(ValueError):
    """The chat names no usable media, or media the graph may not open; says what to do."""


def inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


@dataclass(frozen=True)
class MediaRoots:
    """The folders media may come from (resolved), and whether the caller's own fields are
    trusted to name any path."""

    roots: tuple[Path, ...]
    trusted: bool = False

    @classmethod
    def of(cls, media_roots: Sequence[Path] | None) -> MediaRoots:
        """A server's roots, or (None or empty) a trusted caller's working folder."""
        if media_roots:
            return cls(tuple(Path(r).expanduser().resolve() for r in media_roots))
        return cls((Path.cwd().resolve(),), trusted=True)

    @property
    def text(self) -> str:
        return ", ".join(str(r) for r in self.roots)

    def outside(self, word: str) -> MediaRefused:
        """The one refusal for a path outside the roots, whether or not it exists."""
        return MediaRefused(
            f"{word} is outside the media roots ({self.text}): the graph only opens media "
            "under them (set PARAVT_MEDIA_ROOTS to add a folder)."
        )

    def _places(self, word: str) -> list[Path]:
        try:
            candidate = Path(word).expanduser()
        except RuntimeError:  # "~name" of no user: a word, not a home folder
            candidate = Path(word)
        if candidate.is_absolute():
            return [candidate]
        return [root / candidate for root in self.roots]

    def find(self, word: str) -> Path | None:
        """The file or folder a word of chat text names under a root, or None when it names
        nothing there; MediaRefused for a URL or a path that resolves outside every root."""
        word = word.strip(_QUOTES)
        if not word:
            return None
        if _URL.match(word):
            raise MediaRefused(
                f"{word} is a URL: nothing is fetched from the network. Put the video under "
                f"{self.text} and name its path."
            )
        for place in self._places(word):
            try:
                resolved = place.resolve()
            except (OSError, RuntimeError):  # a symlink loop, a name too long
                continue
            if not inside(resolved, self.roots):
                raise self.outside(word)
            if resolved.exists():
                return resolved
        return None

    def admit(self, path: str) -> Path:
        """The media a field names (``video``, ``default_video``): any path for a trusted
        caller, else a file or folder under a root; MediaRefused otherwise."""
        if self.trusted and not _URL.match(path.strip()):
            return Path(self._places(path.strip())[0])
        found = self.find(path)
        if found is None:
            raise MediaRefused(f"no file or folder {path!r} under the media roots ({self.text})")
        return found

    def named_in(self, text: str) -> tuple[Path | None, str]:
        """(the first path the text names under a root, the text without it)."""
        words = text.split()
        for position, word in enumerate(words):
            found = self.find(word)
            if found is not None:
                rest = words[:position] + words[position + 1 :]
                return found, text.replace(word, "", 1).strip() if rest else ""
        return None, text

    def no_video(self) -> str:
        return NO_VIDEO.format(roots=self.text)


NO_VIDEO = (
    "Which video should I look at? Start your first message with its path, for example "
    "`assets/demo/needle.mp4 What colour is the circle?` (the path may be a video, a folder "
    "of page images, or an image, under {roots})."
)
