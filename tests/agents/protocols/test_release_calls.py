"""agents.protocols.release_calls against the ParaVT release's own readers, on 253 turns
(tests/data/parity/release_calls.json, recorded by tests/parity/record_release_calls.py)."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

from agents.protocols.release_calls import clock_seconds, eval_driver_calls, rl_workflow_calls

DATA = json.loads((Path(__file__).parents[2] / "data/parity/release_calls.json").read_text())


def test_the_eval_driver_reads_the_calls_the_release_reads():
    for item in DATA["items"]:
        assert eval_driver_calls(item["text"]) == item["eval"], item["text"]


def test_the_rl_workflow_reads_the_calls_the_release_reads():
    read = 0
    for item in DATA["items"]:
        expected = item["rl"]
        ours = rl_workflow_calls(item["text"])
        assert (None if ours is None else [list(c) for c in ours]) == expected, item["text"]
        read += expected is not None
    assert 0 < read < len(DATA["items"])  # the corpus has turns read both ways


def test_times_are_read_as_the_release_reads_them():
    for shown, expected in DATA["times"]:
        value = ast.literal_eval(shown) if shown not in ("nan", "inf") else float(shown)
        got = clock_seconds(value)
        assert got == expected or (math.isnan(got) and math.isnan(expected)), shown
