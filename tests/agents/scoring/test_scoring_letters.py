"""agents.scoring.letters: every profile over the same messy replies; never-raise properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scoring.letters import (
    LMMS_EVAL_PREFIXES,
    OFFICIAL_PREFIXES,
    PROFILES,
    extract_letter,
    mlvu_official,
    robust_letter,
    videomme_lmms_eval,
    videomme_official,
)

FUZZ = settings(max_examples=300, deadline=None)
TURN = "<think>\nA man walks in. Option A says he runs.\n</think>\n<answer>D</answer>"

# id, reply, expected letter per profile: official, lmms_eval, mlvu_official, robust
CASES = [
    ("bare", "B", "B", "B", "B", "B"),
    ("bare_newline", "B\n", "B", "B", "B", "B"),
    ("the_answer_is_paren", "The answer is (B).", "B", "B", "B", "B"),
    ("answer_colon_lower", "answer: c", "", "", "", "C"),
    ("answer_dash_lower", "answer - b", "", "", "", "B"),
    ("lower_alone", "a", "", "", "", "A"),
    ("lower_the_answer_is", "the answer is d.", "", "", "", "D"),
    ("letter_paren_because", "B) because the man leaves", "B", "B", "B", "B"),
    ("wrapped_paren", "(B)", "B", "B", "B", "B"),
    ("markdown_bold", "**B**", "B", "B", "", "B"),
    ("option_b", "Option B", "B", "B", "", "B"),
    ("several_comma", "B, C", "B", "B", "", "B"),
    ("several_and", "B and C", "B", "B", "", "B"),
    ("several_a_first", "A and B are both possible", "A", "A", "", "A"),
    ("either_or", "It is either A or B", "A", "A", "", "A"),
    ("empty", "", "", "", "", ""),
    ("blank", "  \n ", "", "", "", ""),
    (
        "leading_reasoning",
        "Let me think. The man picks up a cup, which matches option B.",
        "B",
        "B",
        "",
        "B",
    ),
    (
        "reasoning_then_cue",
        "Options A and B are wrong; the answer is C.",
        "A",
        "A",
        "",
        "C",
    ),
    ("vitamin_then_cue", "Vitamin C matters here, so the choice is B", "C", "C", "", "B"),
    ("article_only", "A man walks into the room.", "A", "A", "", ""),
    ("article_lower_after_cue", "the answer is a man walking", "", "", "", ""),
    ("capital_after_cue", "The answer is A because the man runs", "A", "A", "", "A"),
    ("letter_dot_article", "A. A man walks", "A", "A", "", "A"),
    ("letter_own_line", "C\nBecause the dog barks", "C", "C", "", "C"),
    ("because", "Because it rains", "B", "B", "", ""),
    ("pronoun_contraction", "I'm sure: D", "D", "D", "", "D"),
    ("paren_option_echo", "(A) The man", "A", "A", "A", "A"),
    ("final_answer_bold", "Final Answer: **(D)**", "D", "A", "D", "D"),
    ("answer_option", "Answer: Option A", "A", "A", "", "A"),
    ("correct_answer_is_colon", "The correct answer is: C", "C", "C", "", "C"),
    ("out_of_range", "The answer is E", "", "", "", ""),
    ("eg_is_not_e", "e.g. the man", "", "", "", ""),
    # The glued official prefixes: "Best answer:" / "Best option:" are never stripped.
    ("glued_best_answer", "Best answer: C", "B", "B", "", "C"),
    ("glued_best_option", "Best option: D", "B", "B", "", "D"),
    ("glued_best_option_is", "The best option is B", "B", "B", "", "B"),
    # Prefixes only the official list has: lmms-eval finds the A of "Answer".
    ("answer_colon_capital", "Answer: C", "C", "A", "", "C"),
    ("option_colon", "Option: D", "D", "D", "", "D"),
    (
        "long_without_letter",
        "the man walks away from the table and then sits down on a chair",
        "",
        "",
        "",
        "",
    ),
    ("whole_turn", TURN, "A", "A", "", "D"),
]
PROFILE_ORDER = ("official", "lmms_eval", "mlvu_official", "robust")


@pytest.mark.parametrize(("case", "reply", *PROFILE_ORDER), CASES, ids=[c[0] for c in CASES])
def test_profiles_table(case, reply, official, lmms_eval, mlvu_official, robust):
    expected = dict(zip(PROFILE_ORDER, (official, lmms_eval, mlvu_official, robust), strict=True))
    got = {name: extract_letter(reply, name) for name in PROFILE_ORDER}
    assert got == expected


def test_registry_names_and_functions():
    expected = {
        "official": videomme_official,
        "lmms_eval": videomme_lmms_eval,
        "mlvu_official": mlvu_official,
        "robust": robust_letter,
    }
    assert expected == PROFILES
    assert extract_letter.__defaults__ == ("official", "ABCD")


def test_unknown_profile_is_a_value_error():
    with pytest.raises(ValueError, match="unknown letter profile"):
        extract_letter("B", "vlmevalkit")


def test_official_and_lmms_eval_differ_only_by_the_last_four_prefixes():
    assert OFFICIAL_PREFIXES[:6] == LMMS_EVAL_PREFIXES
    assert OFFICIAL_PREFIXES[6:] == (
        "Answer:",
        "Option:",
        "The correct answer",
        "The correct option",
    )
    # The glue is kept in both lists, exactly as upstream's missing commas leave it.
    for glued in ("The best option isThe correct option is", "Best answer:Best option:"):
        assert glued in OFFICIAL_PREFIXES
        assert glued in LMMS_EVAL_PREFIXES
    assert "The best option is" not in OFFICIAL_PREFIXES
    assert "Best answer:" not in OFFICIAL_PREFIXES
    # Where they differ: "Answer:" is stripped only by the official list.
    assert videomme_official("Answer: D") == "D"
    assert videomme_lmms_eval("Answer: D") == "A"


def test_official_glue_quirk_against_the_unglued_reading():
    # An unglued list would strip "Best answer:" and read C; the official list reads "Best".
    assert videomme_official("Best answer: C") == "B"
    assert videomme_official("Best answer:Best option: C") == "C"  # the glued string itself


@pytest.mark.parametrize("rule", [videomme_official, videomme_lmms_eval])
def test_videomme_rules_are_case_sensitive_and_search_anywhere(rule):
    assert rule("the answer is c") == ""
    assert rule("Dogs bark") == "D"  # any capital in the class counts, as upstream
    assert rule("  E  ", letters="ABCDE") == "E"  # LongVideoBench: the same rule over A-E


def test_mlvu_official_reads_the_character_before_the_first_paren():
    assert mlvu_official("B) The man opens the door.") == "B"
    assert mlvu_official("Best Option: (C) the dog") == "C"
    assert mlvu_official(") B") == ""  # nothing before the paren
    assert mlvu_official("b) lower") == ""  # case-sensitive, as upstream
    assert mlvu_official("C. The dog") == ""  # no paren: the whole reply must be the letter
    assert mlvu_official("Because it rains") == ""  # not "B": the first character is not read
    assert mlvu_official(" D \n") == "D"


def test_robust_reads_whole_turns_through_extract_answer():
    assert robust_letter(TURN) == "D"
    assert robust_letter("<think>\nB or C?\n</think>\n<answer></answer>") == ""
    assert robust_letter("<think>\nThe cup is red.\n</think>\nThe answer is (C).") == "C"


def test_robust_respects_letters():
    assert robust_letter("The answer is E", letters="ABCDE") == "E"
    assert robust_letter("The answer is E") == ""
    assert robust_letter("E or B") == "B"
    assert robust_letter("B", letters="") == ""


def test_release_article_bug_is_not_repeated():
    # The release stripped articles from the gold "A" and matched "the"; here a reply made of
    # articles or an article-led sentence never yields the letter A.
    for reply in ("the", "...", "A man opens a door.", "a dog", "an apple"):
        assert robust_letter(reply) == "", reply


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
                "A",
                "b",
                " ",
                "\n",
                "(",
                ")",
                "**",
                "answer",
                "is",
                ":",
                "Option",
                "The answer",
                "Best answer:",
                "I",
                "'",
                ".",
            ]
        ),
        max_size=30,
    ).map("".join),
)


@FUZZ
@given(texts, st.sampled_from(sorted(PROFILES)), st.sampled_from(["ABCD", "ABCDE", "", "XYZ"]))
def test_no_profile_raises_and_results_are_letters(text, profile, letters):
    letter = extract_letter(text, profile, letters)
    assert letter == "" or (len(letter) == 1 and letter in letters)
