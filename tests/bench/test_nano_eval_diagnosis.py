"""bench/nano_eval.py's diagnosis of the main agent (bench/nano_diagnosis.py): does its answer
follow its own notes, by question kind and by how many needles the notes report, and is a
missed lookup an answer for another needle of its notes."""

from collections import Counter

from agents.synthetic import QAItem
from tests.support.bench_scripts import load_bench

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
    return load_bench("nano_diagnosis")


def test_an_answer_copied_from_the_other_note_is_counted_against_two_sightings():
    nano_eval, counts = _nano_eval(), Counter()
    nano_eval.answer_counts(counts, GROUND, TWO_NOTES, "from 203 to 218 seconds")
    nano_eval.answer_counts(counts, GROUND, TWO_NOTES[:1], "from 13 to 23 seconds")
    assert counts["after_notes"] == 2 and counts["following"] == 1
    assert counts["after_notes_ground"] == 2 and counts["following_ground"] == 1
    assert counts["after_notes_sightings_2"] == 1 and counts["following_sightings_2"] == 0
    assert counts["after_notes_sightings_1"] == 1 and counts["following_sightings_1"] == 1
    # where the named needle sits for the main agent's check: first of two, the only one (last)
    assert counts["after_notes_pick_first"] == 1 and counts["following_pick_first"] == 0
    assert counts["after_notes_pick_last"] == 1 and counts["following_pick_last"] == 1


def test_notes_that_cannot_answer_never_count_as_followed():
    nano_eval, counts = _nano_eval(), Counter()
    nano_eval.answer_counts(counts, GROUND, ["No coloured shapes."], "13-23")
    assert counts["after_notes_sightings_0"] == 1 and counts["following"] == 0


COLOUR = QAItem(
    id="s1-needle_1-colour",
    kind="multiple_choice",
    question="What colour is the circle that appears in the video?",
    options=("A. green", "B. red", "C. blue", "D. yellow"),
    answer="C",
    target={},
)


def test_a_missed_lookup_is_told_apart_by_whose_value_it_answers():
    nano_eval, counts = _nano_eval(), Counter()
    other_span = "from 203 to 218 seconds"
    assert nano_eval.answers_for_another_needle(GROUND, TWO_NOTES, other_span)
    assert not nano_eval.answers_for_another_needle(GROUND, TWO_NOTES, "from 14 to 23 seconds")
    assert not nano_eval.answers_for_another_needle(GROUND, TWO_NOTES, "from 13 to 23 seconds")
    assert nano_eval.answers_for_another_needle(COLOUR, TWO_NOTES, "A")  # the square's colour
    assert not nano_eval.answers_for_another_needle(COLOUR, TWO_NOTES, "B")
    for answer in (
        other_span,
        "from 14 to 23 seconds",
        "from 13 to 23 seconds",
    ):
        nano_eval.answer_counts(counts, GROUND, TWO_NOTES, answer)
    assert counts["lookup_misses"] == 2 and counts["lookup_misses_for_another_needle"] == 1
