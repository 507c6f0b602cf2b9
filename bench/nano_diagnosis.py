"""bench/nano_eval.py's diagnosis of a finished tools run, agent by agent: each sub-agent note
against the oracle's note for the same frames; a perfect note-follower replaying the run's own
notes; and each final answer against what the run's own notes imply, with a miss that
answers for another needle the notes report told apart from one no note implies.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from agents import benchmark
from agents.media import frame_store
from agents.protocol import render_turn
from agents.scoring.accuracy import accuracy_reward
from agents.synthetic import QAItem, read_manifest  # noqa: F401 (QAItem: the doctest)
from graphs.runs.traces import call_role, note_windows
from graphs.store.sqlite_board import Board
from training.nano.intents import intent_of
from training.nano.oracle import reasoning, window_note
from training.nano.reasoning import pick_lines, sightings


def _grid_index(grid: list[float], t: float) -> int:
    return min(range(len(grid)), key=lambda i: abs(grid[i] - t))


def note_counts(counts: Counter, expected: str, got: str, times: list[float], end: float) -> None:
    """Count one sub-agent note against the oracle's note for the same frames, needle by
    needle: colour found, exact colour and shape, shape, span exact and within one frame."""
    seen, said = sightings([expected]), sightings([got])
    counts["windows"] += 1
    counts["notes_exact"] += got == expected
    counts["presence_right"] += bool(seen) == bool(said)
    counts["false_needles"] += not seen and bool(said)
    if not seen:
        return
    counts["windows_with_needle"] += 1
    counts["colours_right"] += {c for c, _ in seen} == {c for c, _ in said}
    counts["shapes_right"] += {s for _, s in seen} == {s for _, s in said}
    counts["spans_right"] += list(seen.values()) == list(said.values())
    grid = [*times, end]
    for (colour, shape), (a, b) in seen.items():
        counts["needles"] += 1
        counts[f"needles_{colour}"] += 1
        named = {c: (s, span) for (c, s), span in said.items()}
        if colour not in named:
            continue
        counts[f"found_{colour}"] += 1
        their_shape, (a2, b2) = named[colour]
        counts["needle_shape_right"] += their_shape == shape
        counts["needle_span_exact"] += (a2, b2) == (a, b)
        counts["needle_span_within_one"] += (
            abs(_grid_index(grid, a) - _grid_index(grid, a2)) <= 1
            and abs(_grid_index(grid, b) - _grid_index(grid, b2)) <= 1
        )


def replay_score(item, notes: list[str]) -> float:
    """What a perfect note-follower scores on `item` from these notes: the oracle's reasoning
    over them, scored by the benchmark's rule (0 when they cannot answer it)."""
    implied = reasoning(item, sightings(notes))
    if implied is None:
        return 0.0
    target = (item.target["start"], item.target["end"]) if item.kind == "grounding" else item.answer
    reply = render_turn(implied[0], answer=implied[1])
    return accuracy_reward(reply, kind=item.kind, target=target) or 0.0


def follows_notes(item, notes: list[str], answer: str | None) -> tuple[tuple | None, bool]:
    """(the oracle's last turn the notes imply as (reasoning, answer), or None when they
    cannot answer; whether `answer` is that answer)."""
    implied = reasoning(item, sightings(notes))
    return implied, implied is not None and (answer or "").strip() == str(implied[1])


#: Question kinds answered by looking one needle's value up by the key the question names.
LOOKUPS = ("colour", "shape", "ground")


def answers_for_another_needle(item, notes: list[str], answer: str | None) -> bool:
    """Whether `answer` is what the notes imply for a needle they report other than the one the
    question names: the question asked again with its colour and shape words swapped for that
    needle's (a wrong pick among the notes, not a wrong copy of the right one)."""
    spans, words = sightings(notes), item.question.split()
    for colour, shape in spans:
        swapped = [
            shape if w in benchmark.SHAPES else colour if w in benchmark.COLOURS else w
            for w in words
        ]
        if swapped == words:
            continue  # that needle is the one asked about
        other = dataclasses.replace(item, question=" ".join(swapped))
        implied = reasoning(other, spans)
        if implied is not None and (answer or "").strip() == str(implied[1]):
            return True
    return False


def pick_position(item, notes: list[str]) -> str | None:
    """Where the needle a lookup names sits among the needles the notes report, as the main
    agent's check finds it: "last", "first" or "other" (None when the notes lack it).

    >>> notes = ["Seen: red square from 3 to 5 seconds.", "Seen: blue circle from 9 to 11 seconds."]
    >>> item = QAItem("v-mc-colour", "multiple_choice", "What colour is the square?", (), "", {})
    >>> pick_position(item, notes)
    'first'
    """
    spans = sightings(notes)
    picked = pick_lines(intent_of(item), spans) if spans else None
    if picked is None:
        return None
    index = list(spans).index(picked[1][0])
    return "last" if index == len(spans) - 1 else "first" if index == 0 else "other"


def answer_counts(counts: Counter, item, notes: list[str], answer: str | None) -> None:
    """Count whether the final answer is what the run's own notes imply, by question kind and
    by how many needles the notes report (the notes the main agent must pick among); and, for
    a lookup it missed, whether it answered for another needle of its notes."""
    implied, follows = follows_notes(item, notes, answer)
    kind = item.id.rsplit("-", 1)[-1]
    groups = ["", f"_{kind}", f"_sightings_{len(sightings(notes))}"]
    if kind in LOOKUPS and (position := pick_position(item, notes)):
        groups.append(f"_pick_{position}")
    for group in groups:
        counts[f"after_notes{group}"] += 1
        counts[f"following{group}"] += follows
    if implied is not None and not follows and kind in LOOKUPS:
        counts["lookup_misses"] += 1
        counts["lookup_misses_for_another_needle"] += answers_for_another_needle(
            item, notes, answer
        )


def run_samples(folder: Path) -> Iterator[tuple]:
    """Each sample of an eval run folder: (its video's truth, its item, its trace, the
    sub-agent calls of the trace)."""
    board = Board(folder / "board.sqlite")
    for line in (folder / "samples.jsonl").read_text().splitlines():
        record = json.loads(line)
        truth, items = read_manifest(Path(record["sample"]["media"]).with_suffix(".json"))
        item = next(i for i in items if i.question == record["sample"]["question"])
        trace = board.trace(record["trace_id"])
        subs = [c for c in trace["model_calls"] if call_role(c) == "sub_agent"]
        yield truth, item, trace, subs


def diagnose(folder: Path) -> dict:
    """Where a tools run goes wrong, agent by agent: each sub-agent note against the oracle's
    note for the same frames; a perfect note-follower replaying the run's own notes; and each
    final answer against what the run's own notes imply."""
    counts, replay = Counter(), {"multiple_choice": [], "grounding": [], "open_ended": []}
    for truth, item, trace, subs in run_samples(folder):
        windows = note_windows(trace)
        notes = []
        for call in subs:
            ref = next(p for p in call["messages"][-1]["content"] if p.get("type") == "frames")
            frames = frame_store.encode_frames(
                ref["video"], tuple(ref["timestamps"]), ref["max_pixels"]
            )
            end = windows[call["agent"]][1]
            times = [f.timestamp for f in frames]
            got = call["completion"]["text"].strip()
            notes.append(got)
            note_counts(counts, window_note(truth, times, end), got, times, end)
        if notes:
            replay[item.kind].append(replay_score(item, notes))
            answer_counts(counts, item, notes, trace["answer"])
    rate = lambda a, b: round(counts[a] / counts[b], 4) if counts[b] else None  # noqa: E731
    colours = sorted(k.removeprefix("needles_") for k in counts if k.startswith("needles_"))
    groups = [k.removeprefix("after_notes_") for k in counts if k.startswith("after_notes_")]
    kinds = sorted(g for g in groups if not g.startswith(("sightings_", "pick_")))
    seen = sorted(g.removeprefix("sightings_") for g in groups if g.startswith("sightings_"))
    picks = [p for p in ("last", "first", "other") if f"pick_{p}" in groups]
    mean = lambda xs: round(sum(xs) / len(xs), 4) if xs else None  # noqa: E731
    return {
        "sub_agent": {
            "windows": counts["windows"],
            "note_exact": rate("notes_exact", "windows"),
            "presence_right": rate("presence_right", "windows"),
            "false_needle_rate": rate("false_needles", "windows"),
            "windows_with_needle": counts["windows_with_needle"],
            "colours_right_when_present": rate("colours_right", "windows_with_needle"),
            "shapes_right_when_present": rate("shapes_right", "windows_with_needle"),
            "spans_right_when_present": rate("spans_right", "windows_with_needle"),
            "needles_in_view": counts["needles"],
            "colour_right_by_colour": {c: rate(f"found_{c}", f"needles_{c}") for c in colours},
            "needles_by_colour": {c: counts[f"needles_{c}"] for c in colours},
            "shape_right": rate("needle_shape_right", "needles"),
            "span_exact": rate("needle_span_exact", "needles"),
            "span_within_one_frame": rate("needle_span_within_one", "needles"),
        },
        "note_follower_replay": {
            "mc_accuracy": mean(replay["multiple_choice"]),
            "grounding_miou": mean(replay["grounding"]),
            "open_f1": mean(replay["open_ended"]),
        },
        "main_agent": {
            "answers_after_notes": counts["after_notes"],
            "follows_its_notes": rate("following", "after_notes"),
            "follows_by_question": {k: rate(f"following_{k}", f"after_notes_{k}") for k in kinds},
            "answers_by_sightings": {n: counts[f"after_notes_sightings_{n}"] for n in seen},
            "lookup_misses": counts["lookup_misses"],
            "lookup_misses_for_another_needle": rate(
                "lookup_misses_for_another_needle", "lookup_misses"
            ),
            "follows_by_sightings": {
                n: rate(f"following_sightings_{n}", f"after_notes_sightings_{n}") for n in seen
            },
            "lookups_by_pick": {p: counts[f"after_notes_pick_{p}"] for p in picks},
            "follows_by_pick": {
                p: rate(f"following_pick_{p}", f"after_notes_pick_{p}") for p in picks
            },
        },
    }
