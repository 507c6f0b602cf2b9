"""bench/nano_second_look.py: each window's second look sees only frames between its first's."""

from __future__ import annotations

import doctest
from collections import Counter

from agents.synthetic import Needle, SyntheticVideo
from tests.support.bench_scripts import load_bench

second_look = load_bench("nano_second_look")


def test_every_window_is_looked_at_twice_and_no_frame_is_seen_twice():
    video = SyntheticVideo("v.mp4", 0, 240.0, 1.0, 128, 96, (Needle(20, 23, "red", "circle", ""),))
    looks = second_look.look_frames(video)
    assert [look for look, _, _ in looks] == ["first", "between"] * 4
    for (_, window, first), (_, again, between) in zip(looks[::2], looks[1::2], strict=True):
        assert window == again and (window.end - window.start) == 60.0
        assert len(first["timestamps"]) == len(between["timestamps"]) == 12
        assert not set(first["timestamps"]) & set(between["timestamps"])
        pairs = zip(first["timestamps"], between["timestamps"], strict=True)
        assert all(a < b <= window.end for a, b in pairs), "each frame after its first-look one"


def test_rates_divide_by_what_each_rate_is_of():
    counts = Counter(windows=10, notes_exact=5, false_needles=1, needles=4, found_red=3)
    counts.update(needle_shape_right=2, needle_span_exact=1, needle_span_within_one=2)
    counts.update(spans_stated=5, spans_inside=4)
    assert second_look.rates(counts) == {
        "windows": 10,
        "needles": 4,
        "note_exact": 0.5,
        "false_needle_rate": 0.1,
        "colour_found": 0.75,
        "shape_right": 0.5,
        "span_exact": 0.25,
        "span_within_one_frame": 0.5,
        "spans_inside_window": 0.8,
    }
    assert second_look.rates(Counter())["span_exact"] is None


def test_the_doctests_pass():
    assert doctest.testmod(second_look).failed == 0


def test_a_span_counts_as_inside_only_in_order_and_within_its_window():
    counts = Counter()
    for note in (
        "Seen: red circle from 190 to 200 seconds; the circle is red.",
        "Seen: red circle from 235 to 98 seconds; the circle is red.",
        "Seen: blue cross from 100 to 100 seconds; the cross is blue.",
        "No coloured shapes.",
    ):
        second_look.count_spans_inside(counts, note, 180.0, 240.0)
    assert (counts["spans_stated"], counts["spans_inside"]) == (3, 1)
