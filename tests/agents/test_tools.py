"""agents.tools: crop_video windows, and the messages the model gets for bad ones."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.protocol import ToolCall, parse, render_turn
from agents.tools import CropWindow, ToolArgumentError, validate_crop

DURATION = 612.4
VALID_SHAPE = (
    '{"name": "crop_video", "arguments": {"start_time": <seconds>, "end_time": <seconds>}}'
)


def crop(**arguments: object) -> ToolCall:
    return ToolCall(0, "crop_video", arguments, raw="")


GOOD = [
    ("floats", {"start_time": 10.5, "end_time": 20.25}, (10.5, 20.25)),
    ("ints", {"start_time": 0, "end_time": 30}, (0.0, 30.0)),
    ("numeric_strings", {"start_time": " 10 ", "end_time": "2e1"}, (10.0, 20.0)),
    ("mm_ss", {"start_time": "1:05", "end_time": "01:12.5"}, (65.0, 72.5)),
    ("mm_ss_past_an_hour", {"start_time": "9:00", "end_time": "75:30"}, (540.0, 612.4)),
    ("hh_mm_ss", {"start_time": "0:01:05", "end_time": "0:10:00"}, (65.0, 600.0)),
    ("end_clamped", {"start_time": 600, "end_time": 5000}, (600.0, 612.4)),
    ("whole_video", {"start_time": 0, "end_time": 612.4}, (0.0, 612.4)),
    ("video_path_ignored", {"start_time": 1, "end_time": 2, "video_path": "/etc/passwd"}, (1, 2)),
    ("video_ignored", {"start_time": 1, "end_time": 2, "video": 7}, (1.0, 2.0)),
]


@pytest.mark.parametrize(("arguments", "window"), [g[1:] for g in GOOD], ids=[g[0] for g in GOOD])
def test_good_windows(arguments, window):
    got = validate_crop(crop(**arguments), DURATION)
    assert got == CropWindow(*window)
    assert got.duration == pytest.approx(window[1] - window[0])


BAD = [
    (
        "past_end",
        {"start_time": 700, "end_time": 800},
        ["start_time 700.0", "past the end", "612.4"],
    ),
    ("start_at_end", {"start_time": 612.4, "end_time": 700}, ["start_time 612.4", "past the end"]),
    (
        "reversed",
        {"start_time": 40, "end_time": 20},
        ["start_time 40.0", "end_time 20.0", "reversed"],
    ),
    ("empty", {"start_time": 20, "end_time": "0:20"}, ["both 20.0", "empty window"]),
    ("negative_start", {"start_time": -5, "end_time": 20}, ["start_time -5.0", "negative"]),
    ("negative_end_string", {"start_time": 0, "end_time": "-1"}, ["end_time '-1'", "negative"]),
    ("nan", {"start_time": float("nan"), "end_time": 20}, ["start_time nan", "finite"]),
    ("nan_string", {"start_time": 1, "end_time": "NaN"}, ["end_time 'NaN'", "finite"]),
    ("inf", {"start_time": 1, "end_time": float("inf")}, ["end_time inf", "finite"]),
    ("huge_int", {"start_time": 10**400, "end_time": 1}, ["start_time", "finite"]),
    ("words", {"start_time": "the start", "end_time": 9}, ["start_time 'the start'", "not a time"]),
    ("bad_clock", {"start_time": "1:75", "end_time": 9}, ["start_time '1:75'", "not a time"]),
    ("bad_clock_hours", {"start_time": "1:75:00", "end_time": 9}, ["'1:75:00'", "not a time"]),
    ("seconds_suffix", {"start_time": "12s", "end_time": 20}, ["'12s'", "not a time"]),
    ("none", {"start_time": None, "end_time": 9}, ["start_time None", "not a time"]),
    ("bool", {"start_time": True, "end_time": 9}, ["start_time True", "not a time"]),
    ("list", {"start_time": [1, 2], "end_time": 9}, ["start_time [1, 2]", "not a time"]),
    ("long_value", {"start_time": "x" * 500, "end_time": 9}, ["'xxxxxx", "..."]),
    ("missing_end", {"start_time": 1}, ["missing argument end_time", "got: start_time"]),
    ("wrong_names", {"start": 1, "end": 2}, ["missing argument start_time", "got: end, start"]),
    ("no_arguments", {}, ["missing argument start_time", "no arguments"]),
]


@pytest.mark.parametrize(("arguments", "phrases"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_windows_explain_themselves(arguments, phrases):
    with pytest.raises(ToolArgumentError) as info:
        validate_crop(crop(**arguments), DURATION)
    message = str(info.value)
    assert message.startswith("crop_video: ")
    assert VALID_SHAPE in message and "start_time < 612.4 (the video length)" in message
    for phrase in phrases:
        assert phrase in message
    assert len(message) < 400


def test_message_matches_house_example():
    with pytest.raises(ToolArgumentError, match=r"start_time 700\.0 is past the end of the video"):
        validate_crop(crop(start_time=700.0, end_time=710), DURATION)
    with pytest.raises(ToolArgumentError, match=r"\(612\.4 s\); choose a window inside 0-612\.4 "):
        validate_crop(crop(start_time=700.0, end_time=710), DURATION)


@pytest.mark.parametrize(
    ("body", "phrase"),
    [
        ('{"name": "zoom_in", "arguments": {"start_time": 1, "end_time": 2}}', "unknown tool"),
        ('{"name": "crop_video", "arguments": {"start_time": 1,', "not valid JSON"),
        ('{"name": "crop_video"}', 'no "arguments"'),
        ('{"arguments": {"start_time": 1, "end_time": 2}}', 'no "name"'),
    ],
)
def test_unusable_calls_pass_the_parser_message_on(body, phrase):
    (call,) = parse(f"<think>\nx\n</think>\n<tool_call>{body}</tool_call>").tool_calls
    with pytest.raises(ToolArgumentError) as info:
        validate_crop(call, DURATION)
    assert str(info.value) == call.error
    assert phrase in call.error and '"start_time": <seconds>' in call.error


def test_hand_built_call_with_another_name_is_refused():
    with pytest.raises(ToolArgumentError, match="unknown tool 'seek'"):
        validate_crop(ToolCall(0, "seek", {"start_time": 1, "end_time": 2}, raw=""), DURATION)


def test_arguments_as_json_string_work_end_to_end():
    text = '<think>\nx\n</think>\n<tool_call>{"name": "crop_video", "arguments": '
    text += '"{\\"start_time\\": \\"0:30\\", \\"end_time\\": 45}"}</tool_call>'
    (call,) = parse(text).tool_calls
    assert validate_crop(call, DURATION) == CropWindow(30.0, 45.0)


@pytest.mark.parametrize("duration", [0, -1.0, float("nan"), float("inf"), "612", None, True])
def test_bad_duration_is_not_the_models_fault(duration):
    with pytest.raises(ValueError) as info:
        validate_crop(crop(start_time=1, end_time=2), duration)
    assert not isinstance(info.value, ToolArgumentError)


TIMES = st.one_of(
    st.floats(),
    st.integers(-(10**6), 10**6),
    st.text(max_size=12),
    st.from_regex(r"-?\d{1,3}(:\d{1,2}){0,2}(\.\d{1,2})?", fullmatch=True),
    st.none(),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(TIMES, TIMES, st.floats(min_value=0.01, max_value=1e5))
def test_result_is_a_window_inside_the_video_or_a_model_error(start, end, duration):
    request = {"name": "crop_video", "arguments": {"start_time": start, "end_time": end}}
    for parsed in parse(render_turn("x", tool_calls=[request])).tool_calls:
        try:
            window = validate_crop(parsed, duration)
        except ToolArgumentError as error:
            assert "crop_video" in str(error)
        else:
            assert 0 <= window.start < window.end <= duration
