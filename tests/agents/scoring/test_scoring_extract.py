"""agents.scoring.extract: the recipe's answer extraction order over real-looking turns."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.protocol import render_tool_call, render_turn, with_prefix
from agents.scoring.extract import extract_answer

FUZZ = settings(max_examples=300, deadline=None)
THINK = "<think>\nThe man picks up the cup near the end.\n</think>\n"
CALL = render_tool_call("crop_video", {"start_time": 5, "end_time": 9})

# id, turn, extracted answer
CASES = [
    ("answer_block", THINK + "<answer>B</answer>", "B"),
    (
        "answer_block_spaces",
        THINK + "<answer>\n  The man opens the door.\n</answer>\n",
        "The man opens the door.",
    ),
    (
        "conflicting_blocks_give_no_answer",
        THINK + "<answer>B</answer>\n<answer> </answer>\n<answer>C</answer>",
        "",
    ),
    ("agreeing_blocks", THINK + "<answer>B</answer>\n<answer> b </answer>", "b"),
    ("blank_then_filled", THINK + "<answer>\n</answer><answer>D</answer>", "D"),
    ("all_blocks_blank", THINK + "<answer></answer>", ""),
    (
        "answer_inside_think_ignored",
        "<think>\nmaybe <answer>A</answer>\n</think>\n<answer>C</answer>",
        "C",
    ),
    (
        "empty_pair_inside_think",
        "<think>\n<answer></answer> hmm\n</think>\n<answer>B</answer>",
        "B",
    ),
    ("no_think_answer", "<answer>B</answer>", "B"),
    ("unclosed_answer", THINK + "<answer>B", "B"),
    ("unclosed_think_then_answer", "<think>\nIt is red.\n<answer>C</answer>", "C"),
    ("after_think", THINK + "The answer is (B).", "The answer is (B)."),
    ("after_think_multiline", THINK + "It is red.\nSo B.\n", "It is red.\nSo B."),
    ("after_think_special_tokens", THINK + "B<|im_end|>", "B"),
    ("tool_call_with_prose_is_no_answer", THINK + CALL + "\nSo the answer is C", ""),
    (
        "tool_only_turn_without_think",
        "Start around <101.5 seconds>, finished by <108.0 seconds>.\n" + CALL,
        "",
    ),
    ("closes_think_without_opener", "It is red.\n</think>\n<answer>B</answer>", "B"),
    ("only_tool_calls", THINK + CALL, ""),
    ("unclosed_tool_call", THINK + '<tool_call>\n{"name": "crop_video"', ""),
    ("tool_response_removed", THINK + "<tool_response>\nframes\n</tool_response>\nD", "D"),
    ("stray_closer", THINK + "B</answer>", "B"),
    ("closed_think_nothing_after", THINK, ""),
    ("prefilled_think", "The cup moves.\n</think>\nB", "B"),
    ("unclosed_think_last_line", "<think>\nLooking closely.\nthe answer is B", "the answer is B"),
    ("bare_letter", "B", "B"),
    (
        "bare_reasoning_last_line",
        "The video shows a dog.\n\nThe answer is C.\n\n",
        "The answer is C.",
    ),
    ("only_open_think", "<think>", ""),
    ("empty", "", ""),
    ("whitespace", " \n\t ", ""),
]


@pytest.mark.parametrize(("case", "turn", "expected"), CASES, ids=[c[0] for c in CASES])
def test_extract_answer_table(case, turn, expected):
    assert extract_answer(turn) == expected


def test_rendered_turns_round_trip():
    for answer in ("B", "The man opens the door.", "12.5 - 20.0"):
        assert extract_answer(render_turn("It is red.", answer=answer)) == answer


def test_prefixed_and_bare_completions_agree():
    completion = "It is red.\n</think>\n<answer>C</answer>"
    assert extract_answer(with_prefix(completion)) == extract_answer(completion) == "C"


texts = st.one_of(
    st.text(max_size=200),
    st.lists(
        st.sampled_from(
            [
                "<think>",
                "</think>",
                "<answer>",
                "</answer>",
                "<tool_call>",
                "</tool_call>",
                "<tool_response>",
                "</tool_response>",
                "<|im_end|>",
                "B",
                "x y",
                " ",
                "\n",
                "{}",
            ]
        ),
        max_size=25,
    ).map("".join),
)


@FUZZ
@given(texts)
def test_never_raises_and_returns_stripped_text(text):
    answer = extract_answer(text)
    assert answer == answer.strip()
