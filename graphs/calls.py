"""The main agent's calls, checked: a window inside the video, at most the turn's cap; a bad
or surplus call keeps its message for the model instead of running."""

from __future__ import annotations

from collections.abc import Sequence

from agents.protocol import ToolCall
from agents.tools import ToolArgumentError, validate_crop
from graphs.state import CallRecord


def validate_calls(
    calls: Sequence[ToolCall], *, run_id: str, turn: int, duration: float, cap: int
) -> list[CallRecord]:
    """Check every call of a turn; a bad or surplus call gets a message for the model."""
    records = []
    for position, call in enumerate(calls):
        start = end = error = None
        if position >= cap:
            error = (
                f"{call.name or 'tool'}: refused, at most {cap} call(s) per turn; this call was "
                "not run. Ask again next turn if you still need this window."
            )
        else:
            try:
                window = validate_crop(call, duration)
                start, end = window.start, window.end
            except ToolArgumentError as exc:
                error = str(exc)
        records.append(
            CallRecord(
                run_id=run_id,
                turn=turn,
                index=position,
                arguments=dict(call.arguments),
                start=start,
                end=end,
                error=error,
            )
        )
    return records
