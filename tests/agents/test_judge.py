"""The judge builder: a benchmark's grading messages go out as the judge role, and the
structured verdict comes back as (extracted answer, correct), or None when unreadable."""

from __future__ import annotations

from agents.judge import judge, judge_request
from evals.sample import Sample
from evals.scorers import mmvu
from tests.support.fakes import ScriptedModel

SAMPLE = Sample(
    "7",
    "",
    "Which ray?",
    "p",
    "multiple_choice",
    "B",
    ("A. x ray", "B. gamma ray"),
    cluster="videos/Art/7.mp4",
    extra={"choices": {"A": "x ray", "B": "gamma ray"}},
)


async def test_the_official_judge_messages_go_out_as_the_judge_role():
    messages = mmvu.judge_messages("<think>gamma</think>It is B.", SAMPLE)
    model = ScriptedModel(judge=lambda r: 'Verdict: {"extracted_answer": "B", "correct": True}')
    verdict = await judge(model, messages)
    (sent,) = model.requests
    assert sent.request.role == "judge" and sent.messages == messages
    assert sent.params.temperature == 0.0 and verdict == ("B", True)
    scored = mmvu.score("It is B.", SAMPLE, "official", official_judge=lambda m: verdict)
    assert scored.metrics["correct"] == 1.0 and scored.extracted == "B"


async def test_an_unreadable_verdict_is_none_and_never_counts_right():
    model = ScriptedModel(judge=lambda r: "I think the model is right.")
    verdict = await judge(model, [{"role": "user", "content": "grade"}])
    assert verdict is None
    scored = mmvu.score("It is B.", SAMPLE, "official", official_judge=lambda m: verdict)
    assert scored.metrics["correct"] == 0.0
    assert judge_request([{"role": "user", "content": "x"}]).agent == "judge"
