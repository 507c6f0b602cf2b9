"""Verifier rows made on the sub-agents' windows: right notes, misread ones, and notes of nothing.

The verified-board runs (``training.nano.data``) give the verifier's own traced calls, but few
of them, and most on empty windows. These rows add, for each window a sub-agent looked at, the
graph's verifier request (``agents.verify.verify_messages``: that window's frames, the run's
question, a note) with its verdict:

- the right note (what the oracle's sub-agent writes for those frames): SUPPORTED;
- for a window that shows a needle, the note with one fact misread (``agents.misreads``: its
  colour, its shape or its time): UNSUPPORTED;
- for an empty window, now and then a sighting of a needle the video holds elsewhere:
  UNSUPPORTED; or a note that states no sighting at all: UNCERTAIN.

A wrong note's row says what is wrong with it (``wrong``: the misread's kind, or
``"invented"``), and every row carries the window's right note (``right_note``), the truth of
the claim target (``training.nano.claims``).

The frames are the sub-agent row's own (its images and their ``<t seconds>`` labels), cut down
to those the note cites (``agents.verify.cited_frames``), so the rows render exactly as the
gate's requests do.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from agents import prompts
from agents.misreads import KINDS, misread
from agents.synthetic import SyntheticVideo
from agents.verify import cited_frames, verify_messages
from graphs.runs.traces import note_windows
from training.nano.oracle import NO_SHAPES, frame_times, window_note
from training.nano.reasoning import num, restated_key

#: Notes that state no sighting (a verifier cannot check them).
UNCHECKABLE = (
    "A person walks across the room.",
    "The frames show a kitchen.",
    "Someone is talking.",
    "There is text on the screen.",
)
#: How often each kind of misread is drawn (``agents.misreads.KINDS``): a shape is the hardest
#: to check (docs/nano.md, "The frames a note cites"), so it is drawn twice as often.
MISREAD_WEIGHTS = {"colour": 1, "shape": 2, "time": 1}
#: Shares of an empty window's rows with an invented sighting and with an uncheckable note.
INVENTED, UNCHECKED = 0.3, 0.1


def _cited(sub_row: Mapping[str, Any], claim: str) -> tuple[list[dict], list[Any]]:
    """The frames of `sub_row` that `claim` cites: their parts (each a ``<t seconds>`` label
    and its images) and their images; all of them when the frames are not labelled one by one."""
    parts, images = list(sub_row["messages"][-2]["content"][:-1]), list(sub_row["images"])
    frames: list[tuple[list[dict], list[Any]]] = []
    shown = 0  # images placed so far
    for part in parts:
        if part.get("type") == "text":
            frames.append(([part], []))
        elif frames and shown < len(images):
            frames[-1][0].append(part)
            frames[-1][1].append(images[shown])
            shown += 1
        else:
            return parts, images
    times = frame_times(sub_row["messages"][-2])
    if shown != len(images) or len(times) != len(frames):
        return parts, images
    kept = [frames[i] for i in cited_frames(claim, times)]
    return [p for f in kept for p in f[0]], [image for f in kept for image in f[1]]


def verify_row(
    sub_row: Mapping[str, Any], question: str, claim: str, verdict: str, **meta: Any
) -> dict[str, Any]:
    """The gate's request about `claim` on the frames of `sub_row` it cites, answered
    `verdict`."""
    system, user = verify_messages({}, question=question, claim=claim)
    frames, images = _cited(sub_row, claim)
    messages = [
        {"role": "system", "content": [prompts.text_part(system["content"])]},
        {"role": "user", "content": [*frames, prompts.text_part(user["content"][-1]["text"])]},
        {"role": "assistant", "content": [prompts.text_part(verdict)]},
    ]
    return {"messages": messages, "images": images, **meta}


def _invented(video: SyntheticVideo, times: Sequence[float], rng: random.Random) -> str:
    needle = rng.choice(video.needles)
    k = rng.randrange(len(times) - 1) if len(times) > 1 else 0
    end = times[k + 1] if k + 1 < len(times) else times[k] + 1
    return (
        f"Seen: {needle.color} {needle.shape} from {num(times[k])} to {num(end)} seconds; "
        f"{restated_key(needle.shape)} {needle.color}."
    )


def verifier_rows(
    trace: Mapping[str, Any], sub_rows: Sequence[Mapping[str, Any]], video: SyntheticVideo
) -> list[dict[str, Any]]:
    """Verifier rows on the windows of `sub_rows` (sub-agent rows of `trace`), seeded by the
    run and the call."""
    spans = note_windows(trace)
    rows = []
    for sub in sub_rows:
        look = f":look{sub['look']}" if sub.get("look", 1) > 1 else ""
        rng = random.Random(f"verify:{trace['run_id']}:{sub['agent']}{look}")
        user = sub["messages"][-2]
        times = frame_times(user)
        start, end = spans[sub["agent"]]
        right = window_note(video, times, end)
        meta = {
            "source": "verify",
            "run_id": trace["run_id"],
            "agent": "verify:" + sub["agent"],
            "role": "verifier",
            "window": [trace["video"], start, end],
            "right_note": right,
        }
        rows.append(verify_row(sub, trace["question"], right, "SUPPORTED", **meta))
        if right != NO_SHAPES:
            kind = rng.choices(KINDS, weights=[MISREAD_WEIGHTS[k] for k in KINDS])[0]
            wrong, changed = misread(right, kind, rng, times=times, window_end=end)
            if changed:
                rows.append(
                    verify_row(sub, trace["question"], wrong, "UNSUPPORTED", **meta, wrong=changed)
                )
        elif rng.random() < INVENTED:
            claim = _invented(video, times, rng)
            rows.append(
                verify_row(sub, trace["question"], claim, "UNSUPPORTED", **meta, wrong="invented")
            )
        elif rng.random() < UNCHECKED / (1 - INVENTED):
            claim = rng.choice(UNCHECKABLE)
            rows.append(verify_row(sub, trace["question"], claim, "UNCERTAIN", **meta))
    return rows
