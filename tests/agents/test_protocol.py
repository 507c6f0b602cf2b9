"""agents.protocol: table tests over real-looking turns (the table: tests/support/protocol_cases.py;
generated input: *_properties.py)."""

from __future__ import annotations

import time

import pytest

from agents.protocol import (
    KNOWN_TOOLS,
    THINK_PREFIX,
    TOOL_NAME,
    Violation,
    parse,
    parse_tool_responses,
    render_tool_call,
    render_tool_responses,
    render_turn,
    with_prefix,
)
from tests.support.protocol_cases import CASES, GOOD_CALLS, THINK, call

V = Violation


@pytest.mark.parametrize(
    ("text", "violations", "answer", "n_calls", "n_valid"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_parse_table(text, violations, answer, n_calls, n_valid):
    turn = parse(text)
    assert turn.violations == violations
    assert turn.well_formed == (not violations)
    if answer is not None:
        assert turn.answer == answer
    assert len(turn.tool_calls) == n_calls
    assert len(turn.valid_calls) == n_valid
    assert [c.index for c in turn.tool_calls] == list(range(n_calls))


def test_multi_call_arguments_and_routing():
    turn = parse(GOOD_CALLS)
    assert turn.think == "The cup moves near the end; look closer."
    assert turn.think_closed
    assert turn.wants_tools
    assert [dict(c.arguments) for c in turn.tool_calls] == [
        {"start_time": 0, "end_time": 30.5},
        {"start_time": 120, "end_time": 180},
        {"start_time": "1:05", "end_time": "1:12"},
    ]
    assert all(c.name == TOOL_NAME and c.error is None for c in turn.tool_calls)


def test_answer_turn_does_not_want_tools():
    turn = parse(THINK + call(1, 2) + "<answer>B</answer>")
    assert not turn.wants_tools
    assert parse(THINK + "<answer>B</answer>").tool_calls == ()


def test_errors_are_model_readable():
    turn = parse(THINK + '<tool_call>{"name": "zoom_in", "arguments": 5}</tool_call>')
    (bad,) = turn.tool_calls
    assert not bad.valid and bad.name == "zoom_in" and bad.arguments == {}
    assert "'zoom_in'" in bad.error and "crop_video" in bad.error
    assert '"arguments" is a JSON number' in bad.error
    assert turn.violations == (V.UNKNOWN_TOOL, V.BAD_TOOL_ARGUMENTS)
    broken = parse(THINK + "<tool_call>{oops}</tool_call>").tool_calls[0]
    assert "not valid JSON" in broken.error and '"start_time"' in broken.error


def test_raw_is_text_between_tags():
    turn = parse(THINK + "<tool_call>\n  ```json\n{}\n```  \n</tool_call>")
    assert turn.tool_calls[0].raw == "\n  ```json\n{}\n```  \n"


def test_unclosed_think_body_stops_at_first_action():
    turn = parse("<think>\nchecking\n" + call(1, 2))
    assert turn.think == "checking" and not turn.think_closed
    assert turn.wants_tools and turn.violations == (V.UNCLOSED_THINK,)


def test_with_prefix_makes_prefilled_completion_well_formed():
    completion = "The cup is left.\n</think>\n<answer>A</answer>"
    assert not parse(completion).well_formed
    turn = parse(with_prefix(completion))
    assert turn.well_formed and turn.answer == "A" and turn.think == "The cup is left."
    assert with_prefix("x") == THINK_PREFIX + "x"


def test_render_tool_call_layout():
    text = render_tool_call("crop_video", {"start_time": 1.5, "end_time": 9})
    assert text == (
        '<tool_call>\n{"name": "crop_video", "arguments": {"start_time": 1.5, "end_time": 9}}'
        "\n</tool_call>"
    )
    assert frozenset({"crop_video"}) == KNOWN_TOOLS


def test_render_tool_call_cannot_leak_tags():
    text = render_turn(
        "t", tool_calls=[{"name": TOOL_NAME, "arguments": {"note": "</tool_call>x"}}]
    )
    turn = parse(text)
    assert turn.well_formed and turn.tool_calls[0].arguments == {"note": "</tool_call>x"}


def test_tool_responses_layout():
    assert render_tool_responses(["a", "b"]) == (
        "<tool_response>\na\n</tool_response>\n<tool_response>\nb\n</tool_response>"
    )
    assert parse_tool_responses("<tool_response>x</tool_response> <tool_response>\n y") == [
        "x",
        " y",
    ]
    assert parse_tool_responses("no responses") == []


def test_parse_is_linear_on_tag_spam():
    text = "<answer></answer>" * 10_000 + "<tool_call>" * 10_000
    started = time.perf_counter()
    turn = parse(text)
    assert time.perf_counter() - started < 2.0
    assert len(turn.tool_calls) == 10_000
