"""Benchmark scorers and aggregates: messy model turns in, the references' numbers out."""

from __future__ import annotations

import doctest
import importlib
import math

import pytest

from evals.results import by_category
from evals.sample import Sample
from evals.scorers import longvideobench as longvideobench_scoring
from evals.scorers import lvbench as lvbench_scoring
from evals.tasks import TASKS, charades, longvideobench, lvbench, mlvu, mmvu, videomme

SCORED_MODULES = tuple(
    importlib.import_module(f"evals.scorers.{name}")
    for name in ("videomme", "mlvu", "longvideobench", "lvbench", "charades", "mmvu")
)


def mc(target: str, n_options: int = 4, sid: str = "q1", **categories) -> Sample:
    options = tuple(f"{letter}. option {letter}" for letter in "ABCDEFGH"[:n_options])
    return Sample(
        id=sid,
        media="/videos/v.mp4",
        question="What happens?",
        prompt="What happens?\n" + "\n".join(options),
        kind="multiple_choice",
        target=target,
        options=options,
        cluster="v",
        categories=dict(categories),
    )


def grounding(start: float, end: float, sid: str = "3MSZA_0") -> Sample:
    return Sample(
        id=sid,
        media="/videos/3MSZA.mp4",
        question="person turns a light on.",
        prompt="Find the moment...",
        kind="grounding",
        target=f"{start}-{end}",
        cluster="3MSZA",
        extra={"start": start, "end": end},
    )


def open_ended(target: str, sid: str = "oe1") -> Sample:
    return Sample(sid, "/videos/o.mp4", "Why?", "Why?", "open_ended", target)


THINK = "<think>\nThe man lifts the cup at 0:40, then the dog runs. A or B? Probably B.\n</think>\n"
LONG_NO_LETTER = "the man walks away from the table and then sits down on a chair by the window"


def test_doctests_of_the_scoring_sections():
    for module in SCORED_MODULES:
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__
        assert result.attempted > 0, module.__name__


# ----------------------------------------------------------------------------- videomme


@pytest.mark.parametrize(
    ("profile", "response", "correct", "extracted"),
    [
        ("official", THINK + "<answer>B</answer>", 1.0, 1.0),
        ("lmms_eval", THINK + "<answer>B</answer>", 1.0, 1.0),
        ("official", "Looking at the frames, the cup falls.\nThe answer is (B).", 1.0, 1.0),
        ("lmms_eval", "Looking at the frames, the cup falls.\nThe answer is (B).", 1.0, 1.0),
        ("official", "B) because the cup falls off the table", 1.0, 1.0),
        ("official", THINK + "The best answer is B.", 1.0, 1.0),
        ("official", "answer: c", 0.0, 0.0),  # no capital letter: nothing extracted
        ("lmms_eval", "answer: c", 0.0, 0.0),
        ("official", "A and B", 0.0, 1.0),  # several letters: the first wins
        ("official", "", 0.0, 0.0),
        ("lmms_eval", "", 0.0, 0.0),
        ("official", "<think>It is B.</think>", 0.0, 0.0),  # closed think, no answer after
        ("official", "<think>It is B.</think><answer> </answer>", 0.0, 0.0),  # blank answer
        ("official", LONG_NO_LETTER, 0.0, 0.0),
        ("official", "Answer: B", 1.0, 1.0),  # "Answer:" is an official prefix
        ("lmms_eval", "Answer: B", 0.0, 1.0),  # lmms-eval keeps it and reads the A
        ("official", "Best answer: D", 1.0, 1.0),  # glued official prefix: the B of "Best"
    ],
)
def test_videomme_score(profile, response, correct, extracted):
    metrics = videomme.score(response, mc("B"), profile)
    assert metrics == {"score": correct, "correct": correct, "extracted": extracted}


def test_videomme_denominators_differ_when_items_have_no_letter():
    samples = [mc("B", sid=f"00{i}-1") for i in range(5)]
    responses = ["B", "<answer>B</answer>", "The answer is A.", "", LONG_NO_LETTER]
    metrics = [videomme.score(r, s) for r, s in zip(responses, samples, strict=True)]
    official = videomme.aggregate(samples, metrics, "official")
    lmms = videomme.aggregate(samples, metrics, "lmms_eval")
    assert official["accuracy"] == pytest.approx(2 / 3)  # 2 right of 3 answered
    assert lmms["accuracy"] == pytest.approx(2 / 5)  # 2 right of all 5
    assert official["answered"] == lmms["answered"] == pytest.approx(3 / 5)


def test_videomme_aggregate_edge_cases():
    s = mc("B")
    none_answered = [videomme.score("", s)] * 3
    assert videomme.aggregate([s] * 3, none_answered, "official")["accuracy"] == 0.0
    assert videomme.aggregate([s] * 3, none_answered, "lmms_eval")["accuracy"] == 0.0
    assert math.isnan(videomme.aggregate([], [], "official")["accuracy"])


# ----------------------------------------------------------------------------- mlvu


@pytest.mark.parametrize("profile", ["official", "vlmevalkit"])
@pytest.mark.parametrize(
    ("response", "correct", "extracted"),
    [
        ("B) The man opens the door.", 1.0, 1.0),  # the prefilled "Best option: (" reply
        ("(B)", 1.0, 1.0),
        ("B", 1.0, 1.0),
        (THINK + "<answer>B</answer>", 1.0, 1.0),
        ("The answer is (B).", 1.0, 1.0),  # the character before the first ")"
        ("answer: c", 0.0, 0.0),
        ("Best option: B", 0.0, 0.0),  # no ")" and more than one letter
        ("C. The dog", 0.0, 0.0),
        ("b)", 0.0, 0.0),  # case-sensitive, as upstream
        ("A) no, B) yes", 0.0, 1.0),  # several letters: the first ")" decides
        ("", 0.0, 0.0),
    ],
)
def test_mlvu_score(profile, response, correct, extracted):
    metrics = mlvu.score(response, mc("B", sid="plotQA_0", task="plotQA"), profile)
    assert metrics == {"score": correct, "correct": correct, "extracted": extracted}


def mlvu_items(spec: dict[str, tuple[int, int]]) -> tuple[list[Sample], list[dict]]:
    """{task: (right, total)} -> samples and their scored metrics."""
    samples, metrics = [], []
    for task, (right, total) in spec.items():
        for i in range(total):
            sample = mc("A", sid=f"{task}_{i}", task=task)
            samples.append(sample)
            metrics.append(mlvu.score("A)" if i < right else "C)", sample))
    return samples, metrics


def test_mlvu_macro_and_micro_differ_on_unequal_task_sizes():
    samples, metrics = mlvu_items({"plotQA": (3, 4), "ego": (0, 1)})
    official = mlvu.aggregate(samples, metrics, "official")
    vlmevalkit = mlvu.aggregate(samples, metrics, "vlmevalkit")
    assert official["m_avg"] == pytest.approx((0.75 + 0.0) / 2)
    assert vlmevalkit["m_avg"] == pytest.approx(3 / 5)
    for out in (official, vlmevalkit):
        assert out["acc/plotQA"] == 0.75
        assert out["acc/ego"] == 0.0


def test_mlvu_vlmevalkit_m_avg_leaves_out_order_like_vlmevalkit():
    samples, metrics = mlvu_items({"plotQA": (1, 2), "order": (3, 3)})
    assert mlvu.aggregate(samples, metrics, "official")["m_avg"] == pytest.approx(0.75)
    vlmevalkit = mlvu.aggregate(samples, metrics, "vlmevalkit")
    assert vlmevalkit["m_avg"] == pytest.approx(0.5)  # order is not in VLMEvalKit's M-Avg
    assert vlmevalkit["acc/order"] == 1.0
    only_order = mlvu.aggregate(samples[2:], metrics[2:], "vlmevalkit")  # a breakdown row
    assert only_order["m_avg"] == 1.0


def test_mlvu_generation_items_need_the_judge():
    with pytest.raises(ValueError, match="G-Avg"):
        mlvu.score("A summary.", open_ended("The video shows a kitchen."), "official")


# ----------------------------------------------------------------------------- longvideobench


@pytest.mark.parametrize(
    ("profile", "response", "n_options", "correct", "extracted"),
    [
        ("official", THINK + "<answer>E</answer>", 5, 1.0, 1.0),
        ("lmms_eval", THINK + "<answer>E</answer>", 5, 1.0, 1.0),
        ("official", "The answer is E.", 5, 1.0, 1.0),
        ("official", "E) the red car", 5, 1.0, 1.0),
        ("official", "Answer: E", 5, 1.0, 1.0),  # official prefix list has "Answer:"
        ("lmms_eval", "Answer: E", 5, 0.0, 1.0),  # lmms-eval's has not: the A is read
        ("official", "Best answer: E", 5, 0.0, 1.0),  # glued official prefix: B of "Best"
        ("lmms_eval", "Best answer: E", 5, 1.0, 1.0),  # lmms-eval's list is not glued
        ("official", "C or E", 5, 0.0, 1.0),
        ("official", "E", 4, 0.0, 0.0),  # E is no option of a 4-option item
        ("lmms_eval", "E", 4, 0.0, 1.0),  # lmms-eval searches A-E whatever the count
    ],
)
def test_longvideobench_score(profile, response, n_options, correct, extracted):
    metrics = longvideobench.score(response, mc("E" if n_options == 5 else "D", n_options), profile)
    assert metrics["score"] == metrics["correct"] == correct
    assert metrics["extracted"] == extracted
    assert metrics["random_guess"] == 0.0


@pytest.mark.parametrize("response", ["", "answer: e", LONG_NO_LETTER, "<think>E?</think>"])
def test_longvideobench_unparsed_official_is_wrong_lmms_eval_guesses(response):
    sample = mc("E", 5, sid="86CxyhFV9MI_0")
    assert longvideobench.score(response, sample, "official") == {
        "score": 0.0,
        "correct": 0.0,
        "extracted": 0.0,
        "random_guess": 0.0,
    }
    guess = longvideobench.score(response, sample, "lmms_eval")
    assert guess["random_guess"] == 1.0 and guess["extracted"] == 0.0
    assert longvideobench_scoring.random_letter(sample) == "E"  # pinned: sha256 of the id
    assert guess["correct"] == 1.0  # the guess happens to hit here


def test_longvideobench_random_fallback_is_deterministic_per_id():
    pinned = {("abc", 4): "D", ("abc", 5): "D", ("x1", 4): "C", ("x1", 5): "B"}
    for (sid, n), letter in pinned.items():
        assert longvideobench_scoring.random_letter(mc("A", n, sid=sid)) == letter
    letters = {longvideobench_scoring.random_letter(mc("A", 4, sid=f"id{i}")) for i in range(60)}
    assert letters == set("ABCD")  # uniform over the item's own options, never E
    sample = mc("A", 5, sid="x2")
    first = longvideobench.score("no idea", sample, "lmms_eval")
    assert all(longvideobench.score("no idea", sample, "lmms_eval") == first for _ in range(5))


def test_longvideobench_aggregate_counts_every_item():
    samples = [mc("A", 5, sid=f"x{i}") for i in range(4)]
    responses = ["A", "B", "", "A"]
    official = [longvideobench.score(r, s) for r, s in zip(responses, samples, strict=True)]
    out = longvideobench.aggregate(samples, official, "official")
    assert out == {"accuracy": 0.5, "answered": 0.75, "random_guesses": 0.0}
    lmms = [
        longvideobench.score(r, s, "lmms_eval") for r, s in zip(responses, samples, strict=True)
    ]
    assert longvideobench.aggregate(samples, lmms, "lmms_eval")["random_guesses"] == 0.25


# ----------------------------------------------------------------------------- lvbench


@pytest.mark.parametrize(
    ("response", "correct", "extracted"),
    [
        ("<think>The caption reads 1633.</think>\nThe answer is (D).", 1.0, 1.0),
        ("answer: d", 1.0, 1.0),
        ("D) 1633", 1.0, 1.0),
        (THINK + "<answer>D</answer>", 1.0, 1.0),
        ("I think it is (C), not (D).", 0.0, 1.0),  # several letters: the first
        ("A man is shown reading.", 0.0, 0.0),  # the article is no letter
        ("E", 0.0, 0.0),  # not an option here
        ("", 0.0, 0.0),
    ],
)
def test_lvbench_score(response, correct, extracted):
    sample = mc("D", question_type=["key information retrieval"])
    assert lvbench.score(response, sample, "official") == {
        "score": correct,
        "correct": correct,
        "extracted": extracted,
    }


def test_lvbench_list_categories_count_in_each_under_leaderboard_codes():
    types = [
        ["key information retrieval"],
        ["reasoning", "event understanding"],
        ["reasoning"],
        ["temporal grounding", "summarization"],
        ["entity recognition"],
        ["made-up type"],
    ]
    samples = [mc("A", sid=str(i), question_type=t) for i, t in enumerate(types)]
    metrics = [lvbench.score(r, s) for r, s in zip("AABBAA", samples, strict=True)]
    out = lvbench.aggregate(samples, metrics, "official")
    assert out == {
        "accuracy": pytest.approx(4 / 6),
        "acc/KIR": 1.0,
        "acc/EU": 1.0,
        "acc/Sum": 0.0,
        "acc/ER": 1.0,
        "acc/Rea": 0.5,
        "acc/TG": 0.0,
        "acc/made-up type": 1.0,
    }
    breakdown = by_category(lvbench.TASK, samples, metrics, "official")["question_type"]
    assert breakdown["reasoning"]["n"] == 2
    assert breakdown["reasoning"]["accuracy"] == 0.5
    assert lvbench_scoring.type_code("KIR") == "KIR"
    assert lvbench_scoring.type_code(" Key Information Retrieval ") == "KIR"


# ----------------------------------------------------------------------------- charades

UNTAGGED_TWO_LINES = "Starting time: 24.3 seconds\nEnding time: 30.4 seconds"
TWO_LINES = THINK + UNTAGGED_TWO_LINES


@pytest.mark.parametrize(
    ("profile", "response", "gold", "expected_iou"),
    [
        ("official", THINK + "<answer>24.3 - 30.4</answer>", (24.3, 30.4), 1.0),
        ("lmms_eval", THINK + "<answer>24.3 - 30.4</answer>", (24.3, 30.4), 1.0),
        ("official", "The event happens in the 12.5 - 20.0 seconds", (12.5, 20.0), 1.0),
        ("lmms_eval", "The event happens in the 12.5 - 20.0 seconds", (12.5, 20.0), 1.0),
        ("official", "from 1:05 to 1:12", (65.0, 72.0), 1.0),
        ("lmms_eval", "from 1:05 to 1:12", (65.0, 72.0), 0.0),  # read as 5 - 1
        ("lmms_eval", "from 1:05 to 1:12", (1.0, 5.0), 1.0),
        ("official", "12.4, 20.0.", (12.4, 20.0), 1.0),
        ("lmms_eval", "12.4, 20.0.", (12.4, 20.0), 0.0),  # no "-" and no start/end word
        ("official", "It starts at 24.3 and ends at 30.4.", (24.3, 30.4), 1.0),
        ("lmms_eval", "It starts at 24.3 and ends at 30.4.", (24.3, 30.4), 0.0),  # one sentence
        ("lmms_eval", TWO_LINES, (24.3, 30.4), 1.0),  # one start/end sentence per line
        ("official", TWO_LINES, (24.3, 30.4), 1.0),
        ("official", UNTAGGED_TWO_LINES, (24.3, 30.4), 0.0),  # no tags: the last line only
        ("official", "30.4 - 24.3", (24.3, 30.4), 1.0),  # reversed pair swapped
        ("lmms_eval", "30.4 - 24.3", (24.3, 30.4), 1.0),
        ("official", "26 - 32", (24.3, 30.4), (30.4 - 26) / (32 - 24.3)),
        ("lmms_eval", "26 to 32", (24.3, 30.4), (30.4 - 26) / (32 - 24.3)),
        ("official", "I could not find the event.", (24.3, 30.4), 0.0),
        ("lmms_eval", "I could not find the event.", (24.3, 30.4), 0.0),
        ("official", "", (24.3, 30.4), 0.0),
        ("lmms_eval", "1..2 - 3", (1.0, 3.0), 0.0),  # upstream crashes on float("1..2")
    ],
)
def test_charades_score(profile, response, gold, expected_iou):
    metrics = charades.score(response, grounding(*gold), profile)
    assert metrics["score"] == metrics["iou"] == pytest.approx(expected_iou)
    for t in (0.3, 0.5, 0.7):
        assert metrics[f"r@{t}"] == float(metrics["iou"] >= t)
    assert set(metrics) == {"score", "iou", "r@0.3", "r@0.5", "r@0.7"}


def test_charades_aggregate_is_x100_with_recall_at_k():
    sample = grounding(10.0, 20.0)
    responses = ["10 - 20", "12 - 20", "10 - 15", "15 - 30", "no idea"]  # IoU 1, .8, .5, .25, 0
    metrics = [charades.score(r, sample) for r in responses]
    assert [m["iou"] for m in metrics] == pytest.approx([1.0, 0.8, 0.5, 0.25, 0.0])
    out = charades.aggregate([sample] * 5, metrics, "official")
    assert out == pytest.approx({"r1@0.3": 60.0, "r1@0.5": 60.0, "r1@0.7": 40.0, "miou": 51.0})
    assert all(math.isnan(v) for v in charades.aggregate([], [], "lmms_eval").values())


# ----------------------------------------------------------------------------- mmvu


@pytest.mark.parametrize(
    ("response", "correct", "extracted"),
    [
        ("<think>The reaction is exothermic.</think>\nTherefore, the final answer is: C", 1.0, 1.0),
        ("C", 1.0, 1.0),
        ("answer: c", 1.0, 1.0),
        ("(B) because the flask heats up", 0.0, 1.0),
        ("", 0.0, 0.0),
    ],
)
def test_mmvu_multiple_choice(response, correct, extracted):
    metrics = mmvu.score(response, mc("C", 5), "official")
    assert metrics == {"score": correct, "correct": correct, "extracted": extracted}


def test_mmvu_open_ended_uses_the_labelled_stand_in():
    sample = open_ended("photosynthesis in the leaves")
    full = mmvu.score(
        "<think>Light...</think><answer>Photosynthesis in the leaves.</answer>", sample
    )
    assert full == {"score": 1.0, "f1": 1.0}
    assert mmvu.score("", sample) == {"score": 0.0, "f1": 0.0}
    with pytest.raises(ValueError, match="blank"):
        mmvu.score("anything", open_ended("  "))
    samples = [mc("C", 5), mc("C", 5), sample]
    metrics = [mmvu.score("C", samples[0]), mmvu.score("A", samples[1]), full]
    out = mmvu.aggregate(samples, metrics, "official")
    assert out == {"mc_accuracy": 0.5, "open_f1_not_official": 1.0}
    only_open = mmvu.aggregate([sample], [full], "official")
    assert math.isnan(only_open["mc_accuracy"])


# ----------------------------------------------------------------------------- registry

EXAMPLES: dict[str, tuple[Sample, str]] = {
    "needle": (mc("B", kind="multiple_choice"), "<answer>B</answer>"),
    "videomme": (mc("B", duration="short"), "<answer>B</answer>"),
    "mlvu": (mc("B", sid="plotQA_0", task="plotQA"), "<answer>B</answer>"),
    "longvideobench": (mc("B", 5), "<answer>B</answer>"),
    "lvbench": (mc("B", question_type=["reasoning"]), "<answer>B</answer>"),
    "charades": (grounding(1.0, 2.0), "<answer>1.0 - 2.0</answer>"),
    "mmvu": (mc("B", 5, subject="Chemistry"), "<answer>B</answer>"),
    "chartqapro": (
        Sample(
            "0",
            "",
            "q",
            "p",
            "open_ended",
            "12.5",
            categories={"question_type": "Factoid"},
            extra={"year_flags": ["NO"]},
        ),
        "Final Answer: 12.6",
    ),
    "slidevqa": (Sample("1", "", "How many?", "p", "open_ended", "3"), "Final Answer: 3"),
    "vqaonline": (
        Sample("2", "", "q", "p", "open_ended", "A border collie."),
        "Final Answer: a border collie",
    ),
}


def test_every_task_has_an_example_here():
    assert set(EXAMPLES) == set(TASKS)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_task_aggregate_returns_its_primary_under_every_profile(name):
    task = TASKS[name]
    assert task.profiles[0] == "official"
    assert task.name == name
    sample, response = EXAMPLES[name]
    for profile in task.profiles:
        metrics = task.score(response, sample, profile)
        assert 0.0 <= metrics["score"] <= 1.0
        assert metrics["score"] == 1.0  # every example is answered right
        out = task.aggregate([sample, sample], [metrics, metrics], profile)
        assert task.primary in out
        assert isinstance(out[task.primary], float)


@pytest.mark.parametrize("module", SCORED_MODULES, ids=lambda m: m.__name__)
def test_unknown_profile_is_an_error(module):
    sample, response = EXAMPLES[module.__name__.rsplit(".", 1)[-1]]
    with pytest.raises(ValueError, match="no profile"):
        module.score(response, sample, "lmms-eval")
    with pytest.raises(ValueError, match="no profile"):
        module.aggregate([sample], [module.score(response, sample)], "vlmeval")
