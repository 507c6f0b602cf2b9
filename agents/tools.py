"""crop_video semantics: turn a parsed call into a time window, or an error the model can fix.

Rules (ParaVT recipe): ``start_time`` and ``end_time`` are seconds, given as numbers, numeric
strings or clock strings ("mm:ss", "hh:mm:ss", fractional seconds allowed); any other
argument, a model-supplied ``video_path`` / ``video`` included, is ignored (the run's own video
is used). A window needs 0 <= start < end and start below the video's duration; an end past
the duration is clamped to it. Every refusal is a :class:`ToolArgumentError` whose message
names the bad value and shows a valid call; it goes back to the model in its tool response.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.protocol import CALL_SHAPE, TOOL_NAME, ToolCall

_CLOCK_RE = re.compile(r"(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class CropWindow:
    """A validated window of the video, in seconds, with ``0 <= start < end <= duration``."""

    start: float
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


class ToolArgumentError(ValueError):
    """A call the model can fix. ``str(error)`` is written for the model, e.g.

    ``crop_video: start_time 700.0 is past the end of the video (612.4 s). A valid call: ...``
    """


def validate_crop(call: ToolCall, video_duration: float) -> CropWindow:
    """The window a crop_video call asks for, end clamped to the video.

    Raises ToolArgumentError for anything the model got wrong, and plain ValueError when
    ``video_duration`` itself is not a positive finite number (not the model's fault).

    >>> from agents.protocol import ToolCall
    >>> validate_crop(ToolCall(0, "crop_video", {"start_time": "1:05", "end_time": 900}, ""), 612.4)
    CropWindow(start=65.0, end=612.4)
    """
    if isinstance(video_duration, bool) or not isinstance(video_duration, int | float):
        raise ValueError(f"video_duration must be a number of seconds, got {video_duration!r}")
    if not (math.isfinite(video_duration) and video_duration > 0):
        raise ValueError(f"video_duration must be positive and finite, got {video_duration!r}")
    duration = float(video_duration)
    hint = (
        f"A valid call: {CALL_SHAPE} with 0 <= start_time < end_time and start_time <"
        f" {_fmt(duration)} (the video length)."
    )
    if call.error is not None:
        raise ToolArgumentError(call.error)
    if call.name != TOOL_NAME:
        raise ToolArgumentError(f"unknown tool {call.name!r}; the only tool is {TOOL_NAME}. {hint}")
    start = _seconds(call.arguments, "start_time", hint)
    end = _seconds(call.arguments, "end_time", hint)
    if start >= duration:
        raise ToolArgumentError(
            f"{TOOL_NAME}: start_time {_fmt(start)} is past the end of the video"
            f" ({_fmt(duration)} s); choose a window inside 0-{_fmt(duration)} seconds. {hint}"
        )
    if start > end:
        raise ToolArgumentError(
            f"{TOOL_NAME}: start_time {_fmt(start)} is after end_time {_fmt(end)}"
            f" (reversed window); put the earlier time first. {hint}"
        )
    if start == end:
        raise ToolArgumentError(
            f"{TOOL_NAME}: start_time and end_time are both {_fmt(start)} (empty window);"
            f" end_time must be later than start_time. {hint}"
        )
    return CropWindow(start, min(end, duration))


def _seconds(arguments: Any, key: str, hint: str) -> float:
    """One time argument as non-negative finite seconds, or a ToolArgumentError."""
    if not isinstance(arguments, Mapping) or key not in arguments:
        got = ", ".join(sorted(map(str, arguments)))[:80] if isinstance(arguments, Mapping) else ""
        raise ToolArgumentError(
            f"{TOOL_NAME}: missing argument {key} (got: {got or 'no arguments'}). {hint}"
        )
    value = arguments[key]
    seconds = _to_seconds(value)
    shown = _show(value)
    if seconds is None:
        raise ToolArgumentError(
            f'{TOOL_NAME}: {key} {shown} is not a time; give seconds (65.5) or "mm:ss" ("1:05.5").'
            f" {hint}"
        )
    if not math.isfinite(seconds):
        raise ToolArgumentError(f"{TOOL_NAME}: {key} {shown} is not a finite number. {hint}")
    if seconds < 0:
        raise ToolArgumentError(f"{TOOL_NAME}: {key} {shown} is negative. {hint}")
    return seconds


def _to_seconds(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:  # an int too large for a float
            return math.inf
    if not isinstance(value, str):
        return None
    text = value.strip()
    clock = _CLOCK_RE.fullmatch(text)
    if clock:
        try:  # int() refuses literals past Python's digit limit; float() may overflow
            hours, minutes, seconds = float(int(clock[1] or 0)), int(clock[2]), float(clock[3])
        except (ValueError, OverflowError):
            return None
        if seconds >= 60 or (clock[1] is not None and minutes >= 60):
            return None
        return hours * 3600.0 + minutes * 60.0 + seconds
    try:
        return float(text)
    except ValueError:
        return None


def _show(value: Any) -> str:
    """The value as the model wrote it, short: 700.0, '1:05', None."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        try:
            return _fmt(float(value))
        except OverflowError:
            pass
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _fmt(seconds: float) -> str:
    """Seconds with at most 3 decimals and at least one: 700.0, 612.4, 12.125."""
    text = f"{seconds:.3f}".rstrip("0")
    return text + "0" if text.endswith(".") else text
