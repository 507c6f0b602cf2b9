"""VideoMME's subtitles: SRT parsing and the cues shown beside each sampled frame."""

from __future__ import annotations

import pytest

from evals.subtitles import NO_SUBTITLES, Cue, parse_srt, read_srt, subtitles_for_frames
from tests.support.downloads import FIXTURES


def test_parse_srt_strips_font_tags_and_joins_lines():
    cues = read_srt(FIXTURES / "videomme" / "subtitle" / "fFjv93ACGo8.srt")
    assert cues == [
        Cue(0.0, 1.0, "Welcome to the kitchen."),
        Cue(1.0, 2.5, "Today we bake bread."),
        Cue(3.0, 4.0, "First, the flour."),
    ]
    assert read_srt(FIXTURES / "missing.srt") is None
    assert parse_srt("\ufeff1\n00:01:02.5 --> 01:00:00,040\nhi\n") == [Cue(62.5, 3600.04, "hi")]


@pytest.mark.parametrize(
    ("times", "fps", "expected"),
    [
        ([0.5, 2.0], None, "Welcome to the kitchen.\nToday we bake bread."),
        ([2.0, 0.5], None, "Welcome to the kitchen.\nToday we bake bread."),  # cue order kept
        ([1.0], None, "Today we bake bread."),  # [start, end): a cue ends where the next begins
        ([2.5, 2.9], None, ""),
        ([3.99], None, "First, the flour."),
        ([3.99], 1.0, ""),  # with fps: frame 4 is outside cue frames [3, 4)
    ],
)
def test_subtitles_for_frames(times, fps, expected):
    cues = read_srt(FIXTURES / "videomme" / "subtitle" / "fFjv93ACGo8.srt")
    assert subtitles_for_frames(cues, times, fps=fps) == expected
    assert subtitles_for_frames([c.to_dict() for c in cues], times, fps=fps) == expected


def test_missing_subtitle_file_reads_no_subtitles_available():
    assert subtitles_for_frames(None, [1.0]) == NO_SUBTITLES == "No subtitles available"
