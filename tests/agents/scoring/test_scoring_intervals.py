"""agents.scoring.intervals: [start, end] pairs from free text, IoU, recall; tables, properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scoring.intervals import iou, parse_interval, recall_at

PROPERTY = settings(max_examples=300, deadline=None)

# id, text, parsed pair (None: nothing to read)
CASES = [
    ("plain_dash", "12.5 - 20.0", (12.5, 20.0)),
    ("charades_answer", "The event happens in the 12.5 - 20.0 seconds", (12.5, 20.0)),
    ("from_mmss_to_mmss", "from 1:05 to 1:12", (65.0, 72.0)),
    ("bracketed_mmss", "[1:05, 1:12]", (65.0, 72.0)),  # the release read it as 5 to 1
    ("comma_trailing_period", "12.4, 20.0.", (12.4, 20.0)),  # the release raised here
    ("units_attached", "12.5s to 20s", (12.5, 20.0)),
    ("units_words", "from 3 seconds to 9.5 seconds", (3.0, 9.5)),
    ("hh_mm_ss", "00:01:05 - 00:01:12", (65.0, 72.0)),
    ("mm_ss_decimals_tagged", "<time>00:19.7 - 00:25.6</time>", (19.7, 25.6)),
    ("frame_time_labels", "<12.3 seconds> - <20.1 seconds>", (12.3, 20.1)),
    ("en_dash", "12.5–20.0", (12.5, 20.0)),
    ("no_spaces", "12-20s", (12.0, 20.0)),
    ("between_and", "between 12.5 and 20.0", (12.5, 20.0)),
    ("parenthesised", "(10.0, 15.0)", (10.0, 15.0)),
    ("reversed_swapped", "from 20 to 12.4", (12.4, 20.0)),
    ("negative_start_kept", "-3.5 to 4", (-3.5, 4.0)),
    ("negative_end_kept_then_swapped", "from 5 to -2", (-2.0, 5.0)),
    ("labelled_start_end", "start time: 12.5, end time: 20.0", (12.5, 20.0)),
    ("starts_and_ends", "It starts at 3 s and ends at 9 s.", (3.0, 9.0)),
    ("leading_reasoning", "The dog appears at 1:00 and leaves.\nAnswer: 1:05 - 1:12", (65.0, 72.0)),
    ("first_pair_wins", "12 - 14 or maybe 30 - 40", (12.0, 14.0)),
    ("digits_in_words_ignored", "clip_v1 shows it at 3-5", (3.0, 5.0)),
    ("single_time", "at 12.5 seconds", None),
    ("no_numbers", "The event happens near the end.", None),
    ("empty", "", None),
    ("huge_not_finite", "1" + "0" * 400 + " - 2" + "0" * 400, None),
]


@pytest.mark.parametrize(("case", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_parse_interval_table(case, text, expected):
    got = parse_interval(text)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((12.5, 20.0), (15.0, 25.0), 0.4),
        ((0, 10), (0, 10), 1.0),
        ((0, 10), (5, 10), 0.5),
        ((0, 1), (2, 3), 0.0),
        ((0, 1), (1, 2), 0.0),  # touching only
        ((3, 3), (3, 3), 0.0),  # empty union
        ((5, 5), (0, 10), 0.0),  # a point has no length
        ((10, 0), (0, 10), 1.0),  # ends taken in order
        ((-5, 5), (0, 10), 5 / 15),  # negative start: no clamping
        ((0, math.inf), (0, 1), 0.0),
        ((math.nan, 1), (0, 1), 0.0),
        ((-1e308, 1e308), (-1e308, 1e308), 1.0),  # e - s overflows without rescaling
    ],
)
def test_iou_table(a, b, expected):
    assert iou(a, b) == pytest.approx(expected)


def test_recall_at():
    ious = [0.8, 0.55, 0.5, 0.3, 0.0]
    assert recall_at(ious, 0.3) == 0.8
    assert recall_at(ious, 0.5) == 0.6
    assert recall_at(ious, 0.7) == 0.2
    assert recall_at(iter(ious), 0.5) == 0.6  # any iterable
    assert recall_at([], 0.5) is None


def test_unparseable_answer_scores_zero_in_the_usual_composition():
    gold = (12.0, 20.0)
    answers = ["12.5 - 20.0", "no idea", "[1:05, 1:12]"]
    scores = [iou(pair, gold) if (pair := parse_interval(a)) else 0.0 for a in answers]
    assert scores == pytest.approx([0.9375, 0.0, 0.0])


floats = st.floats(allow_nan=True, allow_infinity=True)
pairs = st.tuples(floats, floats)


@PROPERTY
@given(pairs, pairs)
def test_iou_symmetric_and_bounded(a, b):
    value = iou(a, b)
    assert value == iou(b, a)
    assert 0.0 <= value <= 1.0


@PROPERTY
@given(st.tuples(st.floats(-1e12, 1e12), st.floats(-1e12, 1e12)).filter(lambda p: p[0] != p[1]))
def test_iou_of_an_interval_with_itself_is_one(pair):
    assert iou(pair, pair) == 1.0


@PROPERTY
@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_parse_interval_round_trips_written_seconds(a, b):
    text = f"The event happens in the {a / 100:.2f} - {b / 100:.2f} seconds."
    assert parse_interval(text) == pytest.approx((min(a, b) / 100, max(a, b) / 100))


@PROPERTY
@given(st.integers(0, 5999), st.integers(0, 5999))
def test_parse_interval_round_trips_clock_times(a, b):
    text = f"[{a // 60}:{a % 60:02d}, {b // 60}:{b % 60:02d}]"
    assert parse_interval(text) == (float(min(a, b)), float(max(a, b)))


texts = st.one_of(
    st.text(max_size=200),
    st.lists(
        st.sampled_from(
            ["1", "2.5", ":", "-", "−", " ", "to", ",", "s", "[", "]", "start", "end", "."]
        ),
        max_size=30,
    ).map("".join),
)


@PROPERTY
@given(texts)
def test_parse_interval_never_raises_and_orders_its_pair(text):
    pair = parse_interval(text)
    if pair is not None:
        start, end = pair
        assert math.isfinite(start) and math.isfinite(end)
        assert start <= end
