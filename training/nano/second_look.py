"""Sub-agent rows at a second look: the same window read from the frames between its first ones.

The verify gate (``graphs.nodes.verify_gate``) has a sub-agent read a window again, from the
times halfway between its first frames (``agents.media.sampling.between_times``), before it
withholds a note. The oracle's traces hold no such looks (the data stage runs the gate with
``verify_rereads=0``), and the nano trained on them finds a needle at those frames but loses
its time (``bench/nano_second_look.py``): its spans follow the grid of the usual frames.

These rows are a sub-agent call of a trace with its frames moved between the first ones, as
the gate moves them, and the oracle's note on what those frames show
(``training.nano.oracle.window_note``, from the decoded frames' own ``<t seconds>`` labels).
A call whose note the noise misread gets none, as it gets no row of its own.
"""

from __future__ import annotations

import random
from collections.abc import Container, Mapping
from typing import Any

from agents import prompts
from agents.media.sampling import between_times
from agents.synthetic import SyntheticVideo
from graphs.runs.traces import call_role, note_windows
from training.nano.oracle import frame_times, window_note
from training.sft_data import chat_row


def _moved(message: Mapping[str, Any], end: float) -> dict[str, Any]:
    """`message` with each frames part's times moved halfway to the next (or to `end`)."""
    content = message.get("content")
    if isinstance(content, str):
        return dict(message)
    parts = []
    for part in content:
        if part.get("type") == prompts.FRAMES_PART:
            times = between_times(part["timestamps"], end)
            part = prompts.frames_part(part["video"], times, part["max_pixels"], part.get("region"))
        parts.append(part)
    return {**message, "content": parts}


def second_look_rows(
    trace: Mapping[str, Any], video: SyntheticVideo, *, share: float, misread: Container[str] = ()
) -> list[dict[str, Any]]:
    """Sub-agent rows of `trace` at a second look, for a `share` of its sub-agent calls
    (drawn by the run and the call), each with ``look: 2``."""
    spans = note_windows(trace)
    rows = []
    for call in trace["model_calls"]:
        agent = call["agent"]
        if call_role(call) != "sub_agent" or agent in misread or agent not in spans:
            continue
        if random.Random(f"second-look:{trace['run_id']}:{agent}").random() >= share:
            continue
        end = spans[agent][1]
        messages = [_moved(m, end) for m in call["messages"]]
        meta = {"source": "second_look", "run_id": trace["run_id"], "agent": agent, "look": 2}
        row = chat_row(messages, **meta, role="sub_agent")  # rendered once: images and labels
        note = window_note(video, frame_times(row["messages"][-1]), end)
        row["messages"].append({"role": "assistant", "content": [prompts.text_part(note)]})
        rows.append(row)
    return rows
