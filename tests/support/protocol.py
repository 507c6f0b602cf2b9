"""Pieces of model turns in the output grammar, for the protocol tests."""

from __future__ import annotations

import json

from agents.protocol import TOOL_NAME


def payload(start: object, end: object) -> str:
    return json.dumps({"name": TOOL_NAME, "arguments": {"start_time": start, "end_time": end}})
