"""Parse .srt subtitles and pick the cues shown at sampled frames (the lmms-eval VideoMME rule).

Frame times are known only when the runner samples frames, so loaders store the parsed cues
(``Cue.to_dict`` rows in ``Sample.extra``) and the runner calls ``subtitles_for_frames`` with the
sampled frame times to build the subtitle block of the prompt.

>>> cues = parse_srt('1\\n00:00:01,000 --> 00:00:02,500\\n<font color="white">Hi</font>\\n')
>>> cues
[Cue(start=1.0, end=2.5, text='Hi')]
>>> subtitles_for_frames(cues, [0.0, 1.2, 1.9])
'Hi'
>>> subtitles_for_frames(None, [0.0])
'No subtitles available'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

NO_SUBTITLES = "No subtitles available"

_TIME = r"(\d+):(\d{1,2}):(\d{1,2})(?:[,.](\d{1,3}))?"
_TIMING = re.compile(rf"^\s*{_TIME}\s*-->\s*{_TIME}")
_FONT_TAG = re.compile(r"</?font\b[^>]*>", re.IGNORECASE)


@dataclass(frozen=True)
class Cue:
    """One subtitle cue, shown for start <= t < end (seconds)."""

    start: float
    end: float
    text: str

    def to_dict(self) -> dict[str, float | str]:
        return asdict(self)


def _seconds(hours: str, minutes: str, seconds: str, millis: str | None) -> float:
    fraction = int(millis.ljust(3, "0")) / 1000 if millis else 0.0
    return int(hours) * 3600 + int(minutes) * 60 + int(seconds) + fraction


def parse_srt(text: str) -> list[Cue]:
    """Cues of an .srt file in file order; font tags stripped, a cue's lines joined by a space.

    Blocks without a timing line are skipped; a cue whose text is empty after stripping is kept
    out. (lmms-eval keeps only the first ``<font>`` match of a cue; we keep all its text.)
    """
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    cues = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in block.strip().split("\n")]
        for i, line in enumerate(lines):
            match = _TIMING.match(line)
            if match:
                g = match.groups()
                body = " ".join(part for part in lines[i + 1 :] if part)
                body = " ".join(_FONT_TAG.sub("", body).split())
                if body:
                    cues.append(Cue(_seconds(*g[:4]), _seconds(*g[4:]), body))
                break
    return cues


def read_srt(path: str | Path) -> list[Cue] | None:
    """The cues of an .srt file, or None when the file does not exist."""
    path = Path(path)
    if not path.is_file():
        return None
    return parse_srt(path.read_text(encoding="utf-8", errors="replace"))


def cues_from_dicts(rows: Iterable[Mapping]) -> list[Cue]:
    """Cues back from the ``to_dict`` rows stored in ``Sample.extra``."""
    return [Cue(float(r["start"]), float(r["end"]), str(r["text"])) for r in rows]


def subtitles_for_frames(
    cues: Sequence[Cue] | Sequence[Mapping] | None,
    frame_times: Iterable[float],
    *,
    fps: float | None = None,
) -> str:
    """The cues on screen at any sampled frame, one per line, in cue order.

    A cue is kept if some frame time t has start <= t < end. With ``fps`` the comparison is made
    on frame indices exactly as lmms-eval does (``int(start * fps) <= round(t * fps) <
    int(end * fps)``). ``cues=None`` means the subtitle file is missing: the block then reads
    "No subtitles available". An existing file with no cue at the sampled frames gives "".
    """
    if cues is None:
        return NO_SUBTITLES
    rows = [c if isinstance(c, Cue) else cues_from_dicts([c])[0] for c in cues]
    times = sorted(frame_times)
    kept = []
    for cue in rows:
        if fps:
            lo, hi = int(cue.start * fps), int(cue.end * fps)
            shown = any(lo <= round(t * fps) < hi for t in times)
        else:
            shown = any(cue.start <= t < cue.end for t in times)
        if shown:
            kept.append(cue.text)
    return "\n".join(kept)
