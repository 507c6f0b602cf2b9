"""PARA-GRPO rewards: format/anchor, tool and accuracy tables, the exploits they guard, TRL glue."""

from __future__ import annotations

import doctest
import functools
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.protocol import THINK_PREFIX, render_tool_call
from training import rewards
from training.para_grpo import ParaGRPOConfig, trace_reward
from training.rewards import (
    RELEASE,
    RewardSettings,
    accuracy_reward,
    anchor_reward,
    format_reward,
    tool_reward,
    total_reward,
)

P = THINK_PREFIX
CALL = render_tool_call("crop_video", {"start_time": 10, "end_time": 20})
THINK = "The cup moves left at 12 s."
ANSWER = f"{P}{THINK}\n</think>\n<answer>B</answer>"  # a perfect answer turn, prefix included
TOOL_TURN = f"{P}{THINK}\n</think>\n{CALL}"
DROPPED = f"{P}{THINK}\n<answer>B</answer>"  # </think> dropped
DEGENERATE = "<|im_start|>" * 5 + "B"


def test_doctests_pass():
    result = doctest.testmod(rewards)
    assert result.attempted >= 12 and result.failed == 0  # accuracy's examples moved to agents


# (name, turns, paper format score); turns include their prefilled Think Prefix.
FORMAT_TABLE = [
    ("perfect answer turn, with the prefix", ANSWER, 1.0),
    ("perfect tool turn", TOOL_TURN, 0.8),  # .2 think + .3 call + .1 paired + .5 * .4
    ("perfect tool episode", [TOOL_TURN, ANSWER], 1.0),
    ("dropped </think>", DROPPED, 0.55),  # .2 + .5 - .5 * .3
    ("unclosed think, no action", f"{P}{THINK} and then it goes on", 0.05),
    ("unclosed think, short", f"{P}hmm", 0.0),  # never negative
    ("empty answer", f"{P}{THINK}\n</think>\n<answer></answer>", 0.5),
    ("blank answer", f"{P}{THINK}\n</think>\n<answer>  \n</answer>", 0.5),
    ("empty call", f"{P}{THINK}\n</think>\n<tool_call></tool_call>", 0.5),
    ("{} call", f"{P}{THINK}\n</think>\n<tool_call>{{}}</tool_call>", 0.5),
    ("call without arguments", f"{P}{THINK}\n</think>\n" + render_tool_call("crop_video", {}), 0.5),
    ("answer spam x30", f"{P}{THINK}\n</think>\n" + "<answer>A</answer>" * 30, 0.4),
    ("</think> spam x20", f"{P}{THINK}\n" + "</think>" * 20 + "\n<answer>B</answer>", 0.4),
    ("answer and call in one turn", f"{TOOL_TURN}\n<answer>B</answer>", 0.4),
    ("tool response written by the model", f"{ANSWER}<tool_response>x</tool_response>", 0.4),
    (
        "tags inside the think",
        f"{P}I will write <answer></answer>.\n</think>\n<answer>B</answer>",
        0.4,
    ),
    ("short think", f"{P}ok\n</think>\n<answer>B</answer>", 0.6),  # no think, no anchor
    ("no think at all", "<answer>B</answer>", 0.5),
    ("bare letter", "B", 0.0),
    ("degenerate", DEGENERATE, 0.0),
    ("episode with an unclosed first turn", [f"{P}{THINK} {CALL}", ANSWER], 0.85),
]


@pytest.mark.parametrize(
    ("name", "turns", "expected"), FORMAT_TABLE, ids=[r[0] for r in FORMAT_TABLE]
)
def test_format_reward_paper(name, turns, expected):
    assert format_reward(turns) == pytest.approx(expected)


# The release scores only generated text: the prefix is stripped before its rules run.
RELEASE_TABLE = [
    ("perfect answer turn", ANSWER, 0.5),
    ("dropped </think> scores higher", DROPPED, 0.6),
    ("perfect tool turn scores nothing", TOOL_TURN, 0.0),
    ("a generated <think> left open goes negative", f"{P}<think>\nhmm", -0.15),
    ("empty answer", f"{P}{THINK}\n</think>\n<answer></answer>", 0.0),
    ("answer spam x30", f"{P}{THINK}\n</think>\n" + "<answer>A</answer>" * 30, 0.5),
    ("degenerate", DEGENERATE, 0.0),
]


@pytest.mark.parametrize(
    ("name", "turns", "expected"), RELEASE_TABLE, ids=[r[0] for r in RELEASE_TABLE]
)
def test_format_reward_release(name, turns, expected):
    assert format_reward(turns, RELEASE) == pytest.approx(expected)


def test_degenerate_rule_reads_each_profile_s_text():
    generated = "<|im_start|>" * 5 + "x" * 230  # 290 characters
    kwargs = dict(kind=MC, target="B", executed_calls=0, tool_responses=0)
    # paper: the prefilled turn (298 characters) is degenerate
    assert total_reward(P + generated, **kwargs).degenerate
    # release: the generated text plus its <|im_end|> (300 characters) is not ...
    assert not total_reward(P + generated, settings=RELEASE, **kwargs).degenerate
    # ... and without <|im_end|> in the decode (290 characters) it is
    no_end = RewardSettings(profile="release", release_im_end=False)
    assert total_reward(P + generated, settings=no_end, **kwargs).degenerate


def test_the_release_inversion_is_fixed():
    assert format_reward(DROPPED) < format_reward(ANSWER) == 1.0
    assert format_reward(DROPPED, RELEASE) > format_reward(ANSWER, RELEASE) == 0.5


def test_answer_suffix_and_anchor_weights():
    no_anchor = RewardSettings(lambda_anchor=0.0)
    assert format_reward(ANSWER, no_anchor) == pytest.approx(0.8)
    plain = RewardSettings(answer_suffix=False, lambda_anchor=0.0)
    assert format_reward(ANSWER, plain) == pytest.approx(0.7)
    assert format_reward(DROPPED, no_anchor) == pytest.approx(0.7)  # only pairing lost


ANCHOR_TABLE = [
    (ANSWER, 0.7),
    (TOOL_TURN, 0.4),
    (DROPPED, -0.3),
    (f"{P}{THINK}\n</think>\n<answer></answer>", 0.4),
    ([TOOL_TURN, ANSWER], 0.7),
    ([f"{P}{THINK} {CALL}", ANSWER], -0.3),
    ("<answer>B</answer>", 0.0),
]


@pytest.mark.parametrize(("turns", "expected"), ANCHOR_TABLE)
def test_anchor_reward(turns, expected):
    assert anchor_reward(turns) == pytest.approx(expected)


_SOUP = [
    "<think>",
    "</think>",
    "<answer>",
    "</answer>",
    "<tool_call>",
    "</tool_call>",
    "{}",
    '{"name": "crop_video", "arguments": {}}',
    "<tool_response>",
    "B",
    " because it moves",
    "\n",
    "<|im_start|>",
    "<tool_code>f(x)</tool_code>",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_SOUP), max_size=12).map("".join), min_size=1, max_size=3))
def test_format_reward_bounds(turns):
    full = [P + turn for turn in turns]
    assert 0.0 <= format_reward(full) <= 1.0
    assert -0.15 <= format_reward(full, RELEASE) <= 1.0


# (executed_calls, tool_responses, correct, paper tool reward): the rollout's record decides.
TOOL_TABLE = [
    (0, 0, True, 0.0),
    (1, 0, False, 0.1),
    (1, 0, True, 0.1),  # the bonus needs a result that came back
    (1, 1, False, 0.3),
    (1, 1, True, 0.8),
    (3, 2, True, 0.8),
    (None, None, True, None),  # no record: cannot judge, never a text search
]


@pytest.mark.parametrize(("executed", "responses", "correct", "expected"), TOOL_TABLE)
def test_tool_reward_paper(executed, responses, correct, expected):
    got = tool_reward(TOOL_TURN, executed_calls=executed, tool_responses=responses, correct=correct)
    assert got == expected


def test_tool_reward_reads_the_record_not_the_text():
    empty_call = f"{P}{THINK}\n</think>\n<tool_call></tool_call>"
    assert tool_reward(empty_call, executed_calls=0, tool_responses=0, correct=True) == 0.0
    assert tool_reward(ANSWER, executed_calls=2, tool_responses=2, correct=False) == 0.3
    assert tool_reward(DEGENERATE, executed_calls=1, tool_responses=1, correct=True) == 0.0


RELEASE_TOOL_TABLE = [
    (TOOL_TURN, False, 0.1),  # level 0.3 is unreachable: tool responses never reach the text
    (TOOL_TURN, True, 0.6),
    (f"{TOOL_TURN}<tool_response>x</tool_response>", False, 0.3),  # only if the text has one
    (f"{P}{THINK}\n</think>\n<tool_call></tool_call>", True, 0.0),
    (f"{P}{THINK}\n</think>\n<tool_call>{{}}</tool_call>", True, 0.0),
    (f'{P}{THINK}\n</think>\n<tool_call>{{"name": "x"}}</tool_call>', False, 0.1),
    (f'{P}{THINK}\n</think>\n<tool_call>["name"]</tool_call>', False, 0.0),
    (ANSWER, True, 0.0),
]


@pytest.mark.parametrize(("text", "correct", "expected"), RELEASE_TOOL_TABLE)
def test_tool_reward_release(text, correct, expected):
    got = tool_reward(text, executed_calls=1, tool_responses=1, correct=correct, settings=RELEASE)
    assert got == pytest.approx(expected)


def test_tool_bonus_needs_a_correct_answer_not_partial_credit():
    episode = [TOOL_TURN, f"{P}{THINK}\n</think>\n<answer>a red car</answer>"]
    kwargs = dict(kind="open_ended", target="a red truck on the road", executed_calls=1)
    paper = total_reward(episode, tool_responses=1, **kwargs)
    release = total_reward(episode, tool_responses=1, settings=RELEASE, **kwargs)
    assert 0 < paper.accuracy < 0.5 and paper.tool == 0.3
    assert release.tool == pytest.approx(0.6)  # 0.1 + 0.5 on a partial F1


MC = "multiple_choice"
ACCURACY_TABLE = [
    (MC, "<answer>B</answer>", "B", 1.0),
    (MC, f"{P}{THINK}\n</think>\n<answer>b</answer>", "B", 1.0),  # case-insensitive letter
    (MC, "The answer is (C).", "C", 1.0),
    (MC, "the", "A", 0.0),  # the release's article stripping matched these to "A"
    (MC, "...", "A", 0.0),
    (MC, "<answer></answer>", "A", 0.0),
    (MC, f"{P}I will put it in <answer></answer>.\n</think>\n<answer>C</answer>", "C", 1.0),
    (MC, "<answer>E</answer>", "E", None),  # gold outside the letters: a data error
    (MC, "<answer>B</answer>", "(B) a dog", 1.0),
    (MC, "<answer>B</answer>", "", None),
    ("grounding", "12.4, 20.0.", (12.4, 20.0), 1.0),  # the release raised on this
    ("grounding", "<answer>The event happens in the 12.5 - 20.0 seconds</answer>", (12.5, 20), 1.0),
    ("grounding", "[1:05, 1:12]", (65.0, 72.0), 1.0),  # the release read 5 to 1
    ("grounding", "-2.0 - 4.0", (-2.0, 4.0), 1.0),  # minus signs kept
    ("grounding", "[0, 10]", "5 - 15", 1 / 3),
    ("grounding", "I do not know", (1.0, 2.0), 0.0),
    ("grounding", "[0, 10]", "no interval", None),
    ("open_ended", "red red blue car", "red red car", 0.857143),  # the release: 0.571
    ("open_ended", "<answer></answer>", "red car", 0.0),
    ("open_ended", "red car", " ", None),
]


@pytest.mark.parametrize(("kind", "text", "target", "expected"), ACCURACY_TABLE)
def test_accuracy_reward(kind, text, target, expected):
    got = accuracy_reward(text, kind=kind, target=target)
    assert got == (None if expected is None else pytest.approx(expected, abs=1e-6))


def test_accuracy_options():
    assert accuracy_reward("<answer>E</answer>", kind=MC, target="E", letters="ABCDE") == 1.0
    assert (
        accuracy_reward("red car", kind="open_ended", target="red car.", open_metric="exact") == 1
    )
    with pytest.raises(ValueError, match="unknown question kind"):
        accuracy_reward("B", kind="yes_no", target="B")
    with pytest.raises(ValueError):
        RewardSettings(profile="nightly")  # type: ignore[arg-type]


def test_total_reward():
    direct = total_reward(ANSWER, kind=MC, target="B", executed_calls=0, tool_responses=0)
    assert (direct.accuracy, direct.format, direct.tool, direct.total) == (1.0, 1.0, 0.0, 2.0)
    tools = total_reward(
        [TOOL_TURN, ANSWER], kind=MC, target="B", executed_calls=1, tool_responses=1
    )
    assert tools.total == pytest.approx(2.8)
    wrong = total_reward(ANSWER, kind=MC, target="C", executed_calls=1, tool_responses=1)
    assert wrong.total == pytest.approx(1.3)
    scaled = total_reward(
        ANSWER,
        kind=MC,
        target="B",
        executed_calls=0,
        tool_responses=0,
        settings=RewardSettings(lambda_fmt=0.5),
    )
    assert scaled.total == 1.5
    degenerate = total_reward(DEGENERATE, kind=MC, target="B", executed_calls=1, tool_responses=1)
    assert degenerate == rewards.RewardParts(0.0, 0.0, 0.0, 0.0, degenerate=True)
    assert total_reward(ANSWER, kind=MC, target="").total is None  # gold unreadable
    assert total_reward(ANSWER, kind=MC, target="B").total is None  # no rollout record


def test_trl_functions():
    generated = [f"{THINK}\n</think>\n<answer>B</answer>", "B", f"{THINK}\n</think>\n{CALL}"]
    columns = dict(
        kind=[MC] * 3, target=["B", "B", "C"], executed_calls=[0, 0, 1], tool_responses=[0, 0, 1]
    )
    assert rewards.accuracy_rewards(generated, **columns) == [1.0, 1.0, 0.0]
    assert rewards.format_rewards(generated, **columns) == [1.0, 0.0, 0.8]
    assert rewards.tool_rewards(generated, **columns) == [0.0, 0.0, 0.3]
    assert rewards.total_rewards(generated, **columns) == [2.0, 1.0, pytest.approx(1.1)]
    assert (
        rewards.tool_rewards(generated, kind=columns["kind"], target=columns["target"])
        == [None] * 3
    )
    no_prefix = functools.partial(rewards.format_rewards, settings=RewardSettings(prefill=None))
    assert no_prefix([ANSWER, generated[0]]) == [1.0, 0.0]


def test_trl_conversational_completions():
    messages = [
        {"role": "assistant", "content": f"{THINK}\n</think>\n{CALL}"},
        {"role": "tool", "content": "A person lifts the cup."},
        {"role": "assistant", "content": [{"type": "text", "text": ANSWER.removeprefix(P)}]},
    ]
    assert rewards.episode_turns(messages, P) == [TOOL_TURN, ANSWER]
    got = rewards.total_rewards(
        [messages], kind=[MC], target=["B"], executed_calls=[1], tool_responses=[1]
    )
    assert got == [pytest.approx(2.8)]


def test_reward_functions_are_picklable():
    funcs, weights = ParaGRPOConfig().reward_functions()
    assert [f.__name__ for f in funcs] == ["accuracy_rewards", "format_rewards", "tool_rewards"]
    assert weights == [1.0, 1.0, 1.0]
    for fn in [*funcs, rewards.total_rewards, rewards.format_reward, rewards.accuracy_reward]:
        clone = pickle.loads(pickle.dumps(fn))
        assert getattr(clone, "__name__", None) == fn.__name__
    assert pickle.loads(pickle.dumps(funcs[1]))([f"{THINK}\n</think>\n<answer>B</answer>"]) == [1.0]


def _trace(**overrides):
    def main(turn, text):
        return {"agent": "main", "turn": turn, "prefill": P, "completion": {"text": text}}

    trace = {
        "status": "answered",
        "kind": None,
        "options": ["A. red", "B. blue", "C. green", "D. pink", "E. grey"],
        "model_calls": [
            main(0, f"{THINK}\n</think>\n{CALL}\n{CALL}"),
            {"agent": "sub:0:0", "turn": 0, "prefill": None, "completion": {"text": "A cup."}},
            main(1, f"{THINK}\n</think>\n<answer>E</answer>"),
        ],
        "tool_calls": [{"error": None}, {"error": "end_time must be after start_time"}],
        "notes": [{"content": "A cup."}],
    }
    return trace | overrides


def test_trace_reward():
    parts = trace_reward(_trace(), target="E")  # five options: letters A-E
    assert (parts.accuracy, parts.format, parts.tool) == (1.0, 1.0, 0.8)
    assert trace_reward(_trace(notes=[]), target="E").tool == 0.1
    release = trace_reward(_trace(), target="E", settings=RELEASE)
    assert (release.format, release.tool) == (0.5, pytest.approx(0.6))
    assert trace_reward(_trace(status="failed"), target="E").total is None
