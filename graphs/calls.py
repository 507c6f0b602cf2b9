"""A turn's calls as the run records them: one CallRecord per call the protocol plans to serve
(`agents.protocols`), with its window or the message the model gets instead."""

from __future__ import annotations

from collections.abc import Sequence

from agents.protocols import PlannedCall
from graphs.state import CallRecord


def call_records(planned: Sequence[PlannedCall], *, run_id: str, turn: int) -> list[CallRecord]:
    return [
        CallRecord(
            run_id=run_id,
            turn=turn,
            index=position,
            arguments=dict(call.arguments),
            start=call.start,
            end=call.end,
            error=call.error,
        )
        for position, call in enumerate(planned)
    ]
