"""agents.protocol under generated input: the parser never raises on any text or tag soup,
and rendering then parsing gives back the calls, the answer and the tool responses."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from agents.protocol import (
    KNOWN_TOOLS,
    TOOL_NAME,
    ParsedTurn,
    Violation,
    parse,
    parse_tool_responses,
    render_tool_responses,
    render_turn,
    with_prefix,
)
from tests.support.protocol import payload

# Explicit budgets keep this file near a few seconds; raise them locally to hunt harder.
PROPERTY = settings(max_examples=200, deadline=None)
FUZZ = settings(max_examples=400, deadline=None)


TAG_STRINGS = [
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<answer>",
    "</answer>",
    "<tool_response>",
    "</tool_response>",
]
JUNK = [
    "\n",
    " ",
    "{",
    "}",
    '"',
    "```json",
    "```",
    "[" * 50,
    '"name": ',
    '"crop_video"',
    '"arguments": ',
    payload(1, 2),
    '{"name": "crop_video", "arguments": "{\\"start_time\\": 1}"}',
    '{"name": 5}',
    "NaN",
    "<",
    ">",
    "/",
]
PIECES = st.sampled_from([*TAG_STRINGS, *JUNK]) | st.text(max_size=6)
TAGGY_TEXT = st.lists(PIECES, max_size=40).map("".join)


def check_invariants(turn: ParsedTurn) -> None:
    assert len(set(turn.violations)) == len(turn.violations)
    assert all(isinstance(v, Violation) for v in turn.violations)
    assert turn.well_formed == (not turn.violations)
    assert [c.index for c in turn.tool_calls] == list(range(len(turn.tool_calls)))
    for c in turn.tool_calls:
        assert isinstance(c.arguments, dict)
        assert c.valid == (c.error is None)
        if c.valid:
            assert c.name in KNOWN_TOOLS
    assert turn.wants_tools == (bool(turn.tool_calls) and turn.answer is None)
    assert (turn.think is None) == (Violation.MISSING_THINK in turn.violations)
    if turn.answer is not None:
        assert turn.answer == turn.answer.strip()
    if turn.well_formed:
        assert turn.think and turn.think_closed
        assert (turn.answer is None) != (not turn.tool_calls)


@FUZZ
@given(st.text())
def test_parse_never_raises_on_any_text(text):
    turn = parse(text)
    check_invariants(turn)
    assert parse(text) == turn


@FUZZ
@given(TAGGY_TEXT)
def test_parse_never_raises_on_tag_soup(text):
    check_invariants(parse(text))
    check_invariants(parse(with_prefix(text)))
    parse_tool_responses(text)


def no_tags(text: str) -> bool:
    return not any(tag in text for tag in TAG_STRINGS)


CLEAN_TEXT = st.text(min_size=1).map(str.strip).filter(bool).filter(no_tags)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | FLOATS | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
CALLS = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.just(TOOL_NAME),
            "arguments": st.fixed_dictionaries(
                {"start_time": FLOATS, "end_time": FLOATS},
                optional={"extra": JSON_VALUES},
            ),
        }
    ),
    min_size=1,
    max_size=5,
)


@PROPERTY
@given(CLEAN_TEXT, CALLS)
def test_render_parse_round_trip_calls(think, calls):
    turn = parse(render_turn(think, tool_calls=calls))
    assert turn.violations == ()
    assert turn.think == think
    assert turn.answer is None and turn.wants_tools
    assert [c.name for c in turn.tool_calls] == [TOOL_NAME] * len(calls)
    for got, sent in zip(turn.tool_calls, calls, strict=True):
        for key in ("start_time", "end_time"):
            assert math.copysign(1, got.arguments[key]) == math.copysign(1, sent["arguments"][key])
        assert got.arguments == sent["arguments"]


@PROPERTY
@given(CLEAN_TEXT, CLEAN_TEXT)
def test_render_parse_round_trip_answer(think, answer):
    turn = parse(render_turn(think, answer=answer))
    assert turn.violations == ()
    assert (turn.think, turn.answer, turn.tool_calls) == (think, answer, ())


RESPONSE = st.text().filter(lambda s: "<tool_response>" not in s and "</tool_response>" not in s)


@PROPERTY
@given(st.lists(RESPONSE, max_size=6))
def test_tool_responses_round_trip(contents):
    assert parse_tool_responses(render_tool_responses(contents)) == contents
