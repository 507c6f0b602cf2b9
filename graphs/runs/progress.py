"""Progress events for `stream_mode="custom"`: frames decoded, calls in flight, notes written.

Each event is a dict with an ``event`` name and its fields; outside a streaming run (a plain
``ainvoke``, a unit test) reporting does nothing.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer


def report(event: str, **fields: Any) -> None:
    try:
        writer = get_stream_writer()
    except RuntimeError:  # not inside a graph run
        return
    writer({"event": event, **fields})
