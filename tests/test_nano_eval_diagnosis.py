"""bench/nano_eval.py's diagnosis of the main agent: does its answer follow its own notes, by
question kind and by how many needles the notes report."""

from collections import Counter

from agents.synthetic import QAItem
from tests.bench_scripts import load_bench

GROUND = QAItem(
    id="s1-needle_1-ground",
    kind="grounding",
    question="When does the green square appear? Give start and end in seconds.",
    options=(),
    answer="13-23",
    target={"start": 13.0, "end": 23.0},
)
TWO_NOTES = [
    "Seen: green square from 13 to 23 seconds; the square is green.",
    "No coloured shapes.",
    "Seen: blue circle from 203 to 218 seconds; the circle is blue.",
]


def _nano_eval():
    return load_bench("nano_eval")


def test_an_answer_copied_from_the_other_note_is_counted_against_two_sightings():
    nano_eval, counts = _nano_eval(), Counter()
    nano_eval.answer_counts(
        counts, GROUND, TWO_NOTES, "The event happens in the 203 - 218 seconds."
    )
    nano_eval.answer_counts(
        counts, GROUND, TWO_NOTES[:1], "The event happens in the 13 - 23 seconds."
    )
    assert counts["after_notes"] == 2 and counts["following"] == 1
    assert counts["after_notes_ground"] == 2 and counts["following_ground"] == 1
    assert counts["after_notes_sightings_2"] == 1 and counts["following_sightings_2"] == 0
    assert counts["after_notes_sightings_1"] == 1 and counts["following_sightings_1"] == 1


def test_notes_that_cannot_answer_never_count_as_followed():
    nano_eval, counts = _nano_eval(), Counter()
    nano_eval.answer_counts(counts, GROUND, ["No coloured shapes."], "13-23")
    assert counts["after_notes_sightings_0"] == 1 and counts["following"] == 0
