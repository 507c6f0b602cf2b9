"""The protocol grammar's table of real-looking turns: each with the violations the parser
must report (in order of first occurrence), its answer, its calls and its valid calls
(tests/agents/test_protocol.py runs it)."""

from __future__ import annotations

from agents.protocol import Violation
from tests.support.protocol import payload

V = Violation


def call(start: object, end: object) -> str:
    return f"<tool_call>\n{payload(start, end)}\n</tool_call>"


THINK = "<think>\nThe cup moves near the end; look closer.\n</think>\n\n"
GOOD_CALLS = THINK + call(0, 30.5) + "\n" + call(120, 180) + "\n" + call("1:05", "1:12")

# id, text, violations (in order of first occurrence), answer, number of calls, valid calls
CASES = [
    ("multi_call", GOOD_CALLS, (), None, 3, 3),
    ("answer", THINK + "<answer>B</answer>", (), "B", 0, 0),
    (
        "answer_multiline",
        THINK + "<answer>\n  The man opens the door.\n</answer>\n",
        (),
        None,
        0,
        0,
    ),
    ("missing_think", "<answer>B</answer>", (V.MISSING_THINK,), "B", 0, 0),
    (
        "bare_completion_of_prefixed_turn",
        "Look closer.\n</think>\n" + call(1, 2),
        (V.MISSING_THINK, V.STRAY_TEXT, V.MISORDERED_TAGS),
        None,
        1,
        1,
    ),
    (
        "unclosed_think_then_answer",
        "<think>\nhmm\n<answer>C</answer>",
        (V.UNCLOSED_THINK,),
        "C",
        0,
        0,
    ),
    (
        "unclosed_think_only",
        "<think>\nI keep thinking",
        (V.UNCLOSED_THINK, V.NO_ACTION),
        None,
        0,
        0,
    ),
    ("empty_think", "<think>\n \n</think>\n<answer>A</answer>", (V.EMPTY_THINK,), "A", 0, 0),
    (
        "bad_json",
        THINK
        + '<tool_call>\n{"name": "crop_video", "arguments": {"start_time": 1,}}\n</tool_call>',
        (V.BAD_TOOL_JSON,),
        None,
        1,
        0,
    ),
    (
        "unknown_tool",
        THINK + '<tool_call>{"name": "zoom_in", "arguments": {"x": 1}}</tool_call>',
        (V.UNKNOWN_TOOL,),
        None,
        1,
        0,
    ),
    (
        "missing_name",
        THINK + '<tool_call>{"arguments": {"start_time": 1, "end_time": 2}}</tool_call>',
        (V.MISSING_TOOL_NAME,),
        None,
        1,
        0,
    ),
    (
        "arguments_as_json_string",
        THINK
        + '<tool_call>{"name": "crop_video", "arguments": "{\\"start_time\\": 3, '
        + '\\"end_time\\": 9}"}</tool_call>',
        (),
        None,
        1,
        1,
    ),
    (
        "arguments_missing",
        THINK + '<tool_call>{"name": "crop_video", "start_time": 3, "end_time": 9}</tool_call>',
        (V.BAD_TOOL_ARGUMENTS,),
        None,
        1,
        0,
    ),
    (
        "arguments_bad_string",
        THINK + '<tool_call>{"name": "crop_video", "arguments": "3 to 9"}</tool_call>',
        (V.BAD_TOOL_ARGUMENTS,),
        None,
        1,
        0,
    ),
    (
        "fenced_json",
        THINK + "<tool_call>\n```json\n" + payload(4, 8) + "\n```\n</tool_call>",
        (),
        None,
        1,
        1,
    ),
    ("json_array", THINK + "<tool_call>[1, 2]</tool_call>", (V.BAD_TOOL_JSON,), None, 1, 0),
    ("empty_call", THINK + "<tool_call></tool_call>", (V.BAD_TOOL_JSON,), None, 1, 0),
    (
        "two_objects_in_one_block",
        THINK + f"<tool_call>\n{payload(1, 2)}\n{payload(3, 4)}\n</tool_call>",
        (V.BAD_TOOL_JSON,),
        None,
        1,
        0,
    ),
    (
        "text_after_answer",
        THINK + "<answer>B</answer>\nHope that helps!",
        (V.TEXT_AFTER_ANSWER,),
        "B",
        0,
        0,
    ),
    ("empty_answer", THINK + "<answer>  </answer>", (V.EMPTY_ANSWER,), "", 0, 0),
    (
        "multiple_answers_last_nonempty_wins",
        THINK + "<answer>A</answer><answer>D</answer><answer></answer>",
        (V.MULTIPLE_ANSWERS,),
        "D",
        0,
        0,
    ),
    (
        "empty_pair_inside_closed_think_is_reasoning",
        "<think>\nI will write <answer></answer> at the end.\n</think>\n<answer>B</answer>",
        (V.MISORDERED_TAGS,),
        "B",
        0,
        0,
    ),
    (
        "empty_pair_inside_unclosed_think",
        "<think>\nplan: <answer></answer> then check\n<answer>B</answer>",
        (V.UNCLOSED_THINK, V.TEXT_AFTER_ANSWER, V.MULTIPLE_ANSWERS),
        "B",
        0,
        0,
    ),
    (
        "planned_call_inside_think_is_not_a_call",
        "<think>\nmaybe " + call(1, 2) + "\n</think>\n<answer>A</answer>",
        (V.MISORDERED_TAGS,),
        "A",
        0,
        0,
    ),
    (
        "answer_with_calls",
        THINK + call(1, 2) + "\n<answer>B</answer>",
        (V.ANSWER_WITH_TOOL_CALLS,),
        "B",
        1,
        1,
    ),
    (
        "call_after_answer",
        THINK + "<answer>B</answer>\n" + call(1, 2),
        (V.MISORDERED_TAGS, V.ANSWER_WITH_TOOL_CALLS),
        "B",
        1,
        1,
    ),
    (
        "answer_nested_in_call",
        THINK + "<tool_call><answer>B</answer></tool_call>",
        (V.MISORDERED_TAGS, V.BAD_TOOL_JSON, V.UNCLOSED_TOOL_CALL, V.ANSWER_WITH_TOOL_CALLS),
        "B",
        1,
        0,
    ),
    (
        "close_before_open",
        "</think><think>\nx\n</think>\n<answer>B</answer>",
        (V.MISORDERED_TAGS,),
        "B",
        0,
        0,
    ),
    (
        "mismatched_closer_ends_block",
        THINK + "<answer>B</tool_call>",
        (V.MISORDERED_TAGS,),
        "B",
        0,
        0,
    ),
    (
        "second_think_block",
        THINK + "<think>more</think>\n<answer>B</answer>",
        (V.MISORDERED_TAGS,),
        "B",
        0,
        0,
    ),
    (
        "unclosed_answer_at_end",
        THINK + "<answer>The red car",
        (V.UNCLOSED_ANSWER,),
        "The red car",
        0,
        0,
    ),
    ("unclosed_call_at_end", THINK + call(5, 9)[:-12], (V.UNCLOSED_TOOL_CALL,), None, 1, 1),
    (
        "unclosed_call_cut_mid_json",
        THINK + '<tool_call>\n{"name": "crop_video", "argu',
        (V.BAD_TOOL_JSON, V.UNCLOSED_TOOL_CALL),
        None,
        1,
        0,
    ),
    (
        "call_opened_twice",
        THINK + call(1, 2)[:-12] + call(3, 4),
        (V.MISORDERED_TAGS, V.UNCLOSED_TOOL_CALL),
        None,
        2,
        2,
    ),
    (
        "stray_text_between_calls",
        THINK + call(1, 2) + "\nand also\n" + call(3, 4),
        (V.STRAY_TEXT,),
        None,
        2,
        2,
    ),
    ("text_before_think", "Sure!\n" + THINK + "<answer>B</answer>", (V.STRAY_TEXT,), "B", 0, 0),
    (
        "hallucinated_tool_response",
        THINK + call(1, 2) + "\n<tool_response>\nA man waves.\n</tool_response>",
        (V.TOOL_RESPONSE_IN_TURN,),
        None,
        1,
        1,
    ),
    ("no_action", THINK + "The answer is B.", (V.STRAY_TEXT, V.NO_ACTION), None, 0, 0),
    ("think_only", THINK, (V.NO_ACTION,), None, 0, 0),
    ("empty_string", "", (V.MISSING_THINK, V.NO_ACTION), None, 0, 0),
    (
        "answer_tag_spam",
        "<answer></answer>" * 50,
        (V.MISSING_THINK, V.MULTIPLE_ANSWERS, V.EMPTY_ANSWER),
        "",
        0,
        0,
    ),
    (
        "uppercase_tags_are_text",
        THINK + "<Answer>B</Answer>",
        (V.STRAY_TEXT, V.NO_ACTION),
        None,
        0,
        0,
    ),
    (
        "unicode",
        "<think>\n视频里的人在 🎬 12.5 秒后离开。\n</think>\n<answer>Café — ß</answer>",
        (),
        "Café — ß",
        0,
        0,
    ),
    (
        "deep_json_nesting",
        THINK + "<tool_call>" + "[" * 100_000 + "</tool_call>",
        (V.BAD_TOOL_JSON,),
        None,
        1,
        0,
    ),
    (
        "int_past_digit_limit",
        THINK
        + '<tool_call>{"name": "crop_video", "arguments": {"start_time": '
        + "9" * 5000
        + "}}</tool_call>",
        (V.BAD_TOOL_JSON,),
        None,
        1,
        0,
    ),
]
