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

The frames are the sub-agent row's own (its images and their ``<t seconds>`` labels), so the
rows render exactly as the gate's requests do.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from agents import prompts
from agents.misreads import KINDS, misread
from agents.synthetic import SyntheticVideo
from agents.verify import verify_messages
from training.nano.oracle import NO_SHAPES, frame_times, window_note
from training.nano.reasoning import num, restated_key

#: Notes that state no sighting (a verifier cannot check them).
UNCHECKABLE = (
    "A person walks across the room.",
    "The frames show a kitchen.",
    "Someone is talking.",
    "There is text on the screen.",
)
#: Shares of an empty window's rows with an invented sighting and with an uncheckable note.
INVENTED, UNCHECKED = 0.3, 0.1


def verify_row(
    sub_row: Mapping[str, Any], question: str, claim: str, verdict: str, **meta: Any
) -> dict[str, Any]:
    """The gate's request about `claim` on the frames of `sub_row`, answered `verdict`."""
    system, user = verify_messages({}, question=question, claim=claim)
    frames = [p for p in sub_row["messages"][-2]["content"][:-1]]
    messages = [
        {"role": "system", "content": [prompts.text_part(system["content"])]},
        {"role": "user", "content": [*frames, prompts.text_part(user["content"][-1]["text"])]},
        {"role": "assistant", "content": [prompts.text_part(verdict)]},
    ]
    return {"messages": messages, "images": sub_row["images"], **meta}


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
    ends = {f"sub:{n['turn']}:{n['index']}": n["end"] for n in trace["notes"]}
    rows = []
    for sub in sub_rows:
        rng = random.Random(f"verify:{trace['run_id']}:{sub['agent']}")
        user = sub["messages"][-2]
        times = frame_times(user)
        right = window_note(video, times, ends[sub["agent"]])
        meta = {
            "source": "verify",
            "run_id": trace["run_id"],
            "agent": "verify:" + sub["agent"],
            "role": "verifier",
            "right_note": right,
        }
        rows.append(verify_row(sub, trace["question"], right, "SUPPORTED", **meta))
        if right != NO_SHAPES:
            wrong, changed = misread(
                right, rng.choice(KINDS), rng, times=times, window_end=ends[sub["agent"]]
            )
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
