"""agents.scoring.text: SQuAD EM / token F1, ANLS and relaxed match over real-looking answers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scoring.text import anls, exact_match, normalize_answer, relaxed_match, token_f1

PROPERTY = settings(max_examples=300, deadline=None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel Tower.", "eiffel tower"),
        ("  a   man,\n walks!  ", "man walks"),
        ("An apple; the pear", "apple pear"),
        ("there theme", "there theme"),  # articles only as whole words
        ("Rock'n'Roll", "rocknroll"),
        ("A", ""),
        ("", ""),
    ],
)
def test_normalize_answer(text, expected):
    assert normalize_answer(text) == expected


# id, prediction, gold, exact match, token F1
CASES = [
    ("identical_after_normalising", "the Eiffel Tower.", "Eiffel tower", 1.0, 1.0),
    ("partial", "the red car", "a red truck", 0.0, 0.5),
    ("multiset_both_repeat", "red red", "red red", 1.0, 1.0),  # the release gave 0.5
    ("multiset_extra_repeat", "go go go", "go go", 0.0, 0.8),  # the release gave 0.4
    ("no_overlap", "the cat sat", "a dog ran", 0.0, 0.0),
    ("long_answer", "He opens the door and then walks out slowly", "he walks out", 0.0, 6 / 11),
    ("empty_prediction", "", "red car", 0.0, 0.0),
    ("prediction_only_articles", "the", "red car", 0.0, 0.0),
    # Golds that SQuAD normalises to nothing are compared case-folded instead.
    ("gold_letter_a_vs_article", "the", "A", 0.0, 0.0),
    ("gold_letter_a_vs_dots", "...", "A", 0.0, 0.0),
    ("gold_letter_a_vs_empty", "", "A", 0.0, 0.0),
    ("gold_letter_a_vs_a", "a", "A", 1.0, 1.0),
]


@pytest.mark.parametrize(("case", "pred", "gold", "em", "f1"), CASES, ids=[c[0] for c in CASES])
def test_exact_match_and_token_f1(case, pred, gold, em, f1):
    assert exact_match(pred, gold) == em
    assert token_f1(pred, gold) == pytest.approx(f1)


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("Eiffel Tower", "eiffel tower", 1.0),
        ("Eifel tower", "Eiffel Tower", 1 - 1 / 12),
        ("  eiffel   tower ", "Eiffel Tower", 1.0),  # spaces collapsed, case folded
        ("Paris", "Eiffel Tower", 0.0),
        ("abcd", "abef", 0.0),  # distance exactly at the threshold scores 0
        ("abcde", "abcxy", 0.6),
        ("", "Eiffel Tower", 0.0),
    ],
)
def test_anls(pred, gold, expected):
    assert anls(pred, gold) == pytest.approx(expected)


def test_anls_threshold_is_a_parameter():
    assert anls("abcd", "abef", threshold=0.6) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("10.4", "10", 1.0),
        ("9.5", "10", 1.0),
        ("10.6", "10", 0.0),
        ("11", "10", 0.0),
        ("0", "0", 1.0),
        ("0.0", "0", 1.0),
        ("0.001", "0", 0.0),  # a zero target needs exactly zero
        ("45%", "45", 1.0),  # "%" dropped on both sides, as ChartQAPro
        ("1,234", "1234", 1.0),
        ("-5.1", "-5", 1.0),
        ("5", "-5", 0.0),
        ("nan", "nan", 1.0),  # not numbers here: compared as text
        ("inf", "100", 0.0),
        ("The Yes.", "yes", 1.0),
        ("Canada", "Mexico", 0.0),
        ("about 10", "10", 0.0),  # only a whole-answer number is read
    ],
)
def test_relaxed_match(pred, gold, expected):
    assert relaxed_match(pred, gold) == expected


def test_relaxed_match_tolerance_is_a_parameter():
    assert relaxed_match("11", "10", tolerance=0.1) == 1.0


@pytest.mark.parametrize("scorer", [exact_match, token_f1, anls, relaxed_match])
@pytest.mark.parametrize("gold", ["", "   \n"])
def test_blank_gold_cannot_be_judged(scorer, gold):
    assert scorer("anything", gold) is None


texts = st.text(max_size=80)


@PROPERTY
@given(texts, texts)
def test_scorers_never_raise_and_stay_in_range(pred, gold):
    assert normalize_answer(pred) == normalize_answer(normalize_answer(pred))
    for scorer in (exact_match, token_f1, anls, relaxed_match):
        value = scorer(pred, gold)
        if not gold.strip():
            assert value is None
        else:
            assert 0.0 <= value <= 1.0
    if gold.strip():
        assert exact_match(pred, gold) in (0.0, 1.0)
        assert relaxed_match(pred, gold) in (0.0, 1.0)


@PROPERTY
@given(texts.filter(str.strip))
def test_an_answer_matches_itself(gold):
    assert exact_match(gold, gold) == 1.0
    assert anls(gold, gold) == 1.0
    assert relaxed_match(gold, gold) == 1.0
    assert token_f1(gold, gold) == 1.0
