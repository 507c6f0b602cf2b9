"""Every task's scorer: the profile registry, what a score carries, and the replies the issue
names, read as each reference reads them. The expected values here were checked against the
references' own functions; tests/parity/test_parity_*.py prove agreement on the whole corpus."""

from __future__ import annotations

import dataclasses
import doctest
import importlib

import pytest

from agents.scoring.reply import VIEWS, strip_reasoning
from evals.sample import Sample
from evals.tasks import TASKS
from evals.tasks.base import Scored

SCORED_MODULES = tuple(
    importlib.import_module(f"evals.scorers.{name}")
    for name in ("videomme", "mlvu", "longvideobench", "lvbench", "charades", "mmvu")
)


def mc(target: str, n_options: int = 4, sid: str = "q1", **categories) -> Sample:
    options = tuple(f"{chr(65 + i)}. option {i}" for i in range(n_options))
    return Sample(
        sid,
        "/v.mp4",
        "Which?",
        "Which?",
        "multiple_choice",
        target,
        options,
        "v1",
        dict(categories),
    )


def grounding(start: float, end: float) -> Sample:
    return Sample(
        "3MSZA_0",
        "/v.mp4",
        "person turns a light on",
        "p",
        "grounding",
        f"{start}-{end}",
        cluster="3MSZA",
        extra={"start": start, "end": end},
    )


def test_doctests_of_the_scorers():
    for module in SCORED_MODULES:
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__
        assert result.attempted > 0, module.__name__


# --- the whole reply, as each harness reads it ---------------------------------------------


def test_official_reads_the_whole_reply_lmms_eval_strips_reasoning_first():
    reply = "<think>It could be A.</think>\n<answer>B</answer>"
    videomme = TASKS["videomme"]
    assert videomme.score(reply, mc("B"), "official").extracted == "A"  # the A of the think
    lmms = videomme.score(reply, mc("B"), "lmms_eval")
    assert (lmms.filtered, lmms.extracted) == ("<answer>B</answer>", "B")


def test_a_prefilled_think_prefix_is_read_both_ways():
    """The final reply is the chat API's text: with the Think Prefix prefilled it opens inside
    the think and only closes it; without, the model writes the opener itself."""
    prefilled = "The cup is red, matches B.\n</think>\n<answer>B</answer>"
    written = "<think>\n" + prefilled
    for reply in (prefilled, written):
        assert strip_reasoning(reply) == "<answer>B</answer>"
        assert TASKS["videomme"].score(reply, mc("B"), "lmms_eval").metrics["correct"] == 1.0
        assert TASKS["videomme"].score(reply, mc("B"), "official").extracted == "B"


@pytest.mark.parametrize(
    ("reply", "official", "readme"),
    [
        ("C\n\nExplanation: the cup falls.", "C", "C"),
        ("Answer: C", "A", "C"),
        ("Best answer: C", "B", "B"),
        ("answer: d", "", ""),
    ],
)
def test_videomme_official_and_the_readme_copy(reply, official, readme):
    task = TASKS["videomme"]
    assert task.score(reply, mc("C"), "official").extracted == official
    assert task.score(reply, mc("C"), "official_readme").extracted == readme


def test_videomme_official_leaves_unanswered_items_out_of_the_denominator():
    task, samples = TASKS["videomme"], [mc("B", sid=str(i)) for i in range(4)]
    replies = ["B", "B", "A", "none"]
    scored = [task.score(r, s).metrics for r, s in zip(replies, samples, strict=True)]
    assert task.aggregate(samples, scored, "official")["overall"] == pytest.approx(200 / 3)
    lmms = [task.score(r, s, "lmms_eval").metrics for r, s in zip(replies, samples, strict=True)]
    assert task.aggregate(samples, lmms, "lmms_eval") == {"videomme_perception_score": 50.0}


def test_lvbench_official_polishes_the_whole_reply():
    task, sample = TASKS["lvbench"], mc("D", question_type=["reasoning"])
    assert task.score("(D) 1633", sample).metrics["correct"] == 1.0
    wrong = task.score("answer: d", sample)
    assert (wrong.extracted, wrong.metrics["correct"]) == ("a", 0.0)


@pytest.mark.parametrize(
    ("reply", "script", "task"),
    [
        ("Start time: 6.6 seconds\nEnd time: 13.4 seconds", [[6.6, 13.4]], [[6.6, 13.4]]),
        ("from 1:05 to 1:12", [], [[65.0, 72.0]]),
        ("12.5 - 20.0", [], [[12.5, 20.0]]),  # eval_tvg.py reads keyword sentences only
        ("The event happens in the 5.3s-8.9s.", [[5.3, 8.9]], [[5.3, 8.9]]),
        ("It happens in 5.3 – 8.9 seconds.", [[5.3, 8.9]], [[5.3, 8.9]]),
        ("<think>It is early.</think>42", [], []),
    ],
)
def test_charades_readers_of_both_lmms_eval_commits(reply, script, task):
    charades = TASKS["charades"]
    assert charades.score(reply, grounding(6.6, 13.4), "lmms_eval_2c08ee5").extracted == script
    assert charades.score(reply, grounding(6.6, 13.4), "lmms_eval").extracted == task


def test_charades_counts_a_repeated_query_once_with_its_last_reply():
    task, sample = TASKS["charades"], grounding(10.0, 20.0)
    first, last = (task.score(r, sample).metrics for r in ("It happens in 10 - 20.", "no idea"))
    assert task.aggregate([sample, sample], [first, last])["mIOU"] == 0.0
    other = dataclasses.replace(sample, question="another query")
    assert task.aggregate([sample, other], [first, last])["mIOU"] == 50.0


def test_longvideobench_guesses_only_under_the_lmms_eval_profile():
    task = TASKS["longvideobench"]
    samples = [
        mc("A", 5, sid=f"x{i}", duration_group="15", question_category="S2E") for i in range(3)
    ]
    replies = ["A", "no idea", "no idea"]
    strict = task.score_in_order(replies, samples, "lmms_eval_no_guess")
    assert [s.extracted for s in strict] == ["A", "", ""]
    guessed = task.score_in_order(replies, samples, "lmms_eval")
    assert [s.metrics["random_guess"] for s in guessed] == [0.0, 1.0, 1.0]
    again = task.score_in_order(replies, samples, "lmms_eval")
    assert [s.extracted for s in guessed] == [s.extracted for s in again]  # seeded


def test_mlvu_generation_items_need_the_judge():
    with pytest.raises(ValueError, match="G-Avg"):
        TASKS["mlvu"].score("A summary.", Sample("s", "", "q", "q", "open_ended", "x"))


# --- the registry ---------------------------------------------------------------------------

EXAMPLES: dict[str, tuple[Sample, str]] = {
    "needle": (mc("B", kind="multiple_choice"), "<answer>B</answer>"),
    "videomme": (mc("B", duration="short"), "B"),
    "mlvu": (mc("B", sid="plotQA_0", task="plotQA"), "B"),
    "longvideobench": (mc("B", 5, duration_group="15", question_category="S2E"), "B"),
    "lvbench": (mc("B", question_type=["reasoning"]), "B"),
    "charades": (grounding(1.0, 2.0), "The event happens in the 1.0 - 2.0 seconds."),
    "mmvu": (mc("B", 5), "B"),
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
        "12.6",
    ),
    "slidevqa": (Sample("1", "", "How many?", "p", "open_ended", "3"), "3"),
    "vqaonline": (Sample("2", "", "q", "p", "open_ended", "A border collie."), "a border collie"),
}


def test_every_task_has_an_example_here():
    assert set(EXAMPLES) == set(TASKS)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_profile_names_its_source_and_reports_its_primary(name):
    task = TASKS[name]
    assert task.default_profile in task.profiles
    sample, reply = EXAMPLES[name]
    for profile, spec in task.profiles.items():
        assert spec.source and spec.reads in VIEWS, profile
        judged = {"official_judge": lambda messages: ("B", True)} if spec.judge else {}
        scored = task.score(reply, sample, profile, **judged)
        assert isinstance(scored, Scored)
        assert scored.metrics["score"] == 1.0, profile  # every example is answered right
        out = task.aggregate([sample, sample], [scored.metrics] * 2, profile)
        assert isinstance(out[task.primary_for(profile)], float | int), profile


@pytest.mark.parametrize("name", sorted(TASKS))
def test_unknown_profile_is_an_error(name):
    task = TASKS[name]
    sample, reply = EXAMPLES[name]
    with pytest.raises(ValueError, match="no profile"):
        task.score(reply, sample, "lmms-eval")
    with pytest.raises(ValueError, match="no profile"):
        task.profile("vlmeval")
