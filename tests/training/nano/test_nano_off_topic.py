"""Questions a needle video cannot answer, composed from parts (training.nano.off_topic): kept
apart from the held-out phrasing set, asked as the graph asks, answered honestly."""

from __future__ import annotations

import asyncio
import random
import re

from agents import benchmark
from agents.protocol import parse
from graphs.runs.traces import call_role
from tests.bench.test_nano_phrasing import held_out, skeleton
from training.nano import data, notes, off_topic, phrasing
from training.nano.reasoning import HONEST

UNKNOWN = "The question asks something other than coloured shapes"

#: Words that name what an answerable question asks about; an off-topic wording uses none.
ANSWERABLE = (
    *benchmark.COLOURS,
    *benchmark.SHAPES,
    "colour",
    "color",
    "shape",
    "when",
    "time",
    "second",
    "how many",
    "first",
    "last",
    "describe",
)


def test_no_off_topic_wording_is_held_out_or_names_what_the_video_shows():
    wordings = off_topic.templates()
    assert len(set(wordings)) == len(wordings) > 200
    bench = held_out()
    held = {skeleton(t) for group in bench.TEMPLATES.values() for t in group}
    for wording in wordings:
        low = wording.lower()
        assert skeleton(wording) not in held, wording
        assert not any(re.search(rf"\b{w}", low) for w in off_topic.KEPT_OUT), wording
        assert not any(re.search(rf"\b{w}", low) for w in ANSWERABLE), wording
    # each word kept out is one the held-out set's off-topic wordings use
    unanswerable = " ".join(bench.TEMPLATES["unanswerable"]).lower()
    assert all(w in unanswerable for w in off_topic.KEPT_OUT)


def test_an_off_topic_question_asks_the_unknown_intent_without_options():
    video = notes.plan_video(7)
    draws, again = random.Random(3), random.Random(3)
    first = [off_topic.off_topic(video, draws, k) for k in range(40)]
    assert first == [off_topic.off_topic(video, again, k) for k in range(40)]
    asked = [phrasing.phrased(video, random.Random(3), k) for k in range(40)]
    assert not {i.id for i in first} & {i.id for i in asked}
    for item in first:
        assert item.id.endswith("-unknown") and "-o" in item.id
        assert item.kind == "open_ended" and item.options == () and item.answer == ""
        assert item.target["intent"] == {"ask": "unknown", "colour": None, "shape": None}
    stems = {skeleton(i.question) for i in first}
    assert len(stems) > 30, "forty draws, mostly different wordings"


def test_off_topic_note_rows_answer_honestly_and_leave_every_other_row_as_it_was():
    seeds = range(60, 66)
    plain = list(notes.note_rows(seeds, phrased=4))
    more = list(notes.note_rows(seeds, phrased=4, off_topic=1.0))
    extra = [r for r in more if re.search(r"-o\d+-unknown$", r["question_id"])]
    assert [r for r in more if r not in extra] == plain
    assert len(extra) == len(seeds)
    some = list(notes.note_rows(range(60, 100), phrased=0, extras=False, off_topic=0.5))
    assert 10 < sum(r["question_id"].endswith("-o0-unknown") for r in some) < 30
    for row in extra:
        _, responses, turn = (m["content"][0]["text"] for m in row["messages"])
        reply = parse(turn)
        assert reply.well_formed and reply.answer.startswith(HONEST), turn
        assert reply.think.startswith(UNKNOWN)
        assert "<tool_response>" in responses


def test_off_topic_questions_run_through_the_graph_as_phrased_ones_do(tmp_path):
    videos = [(1.0, *benchmark.generate(tmp_path / "v", s, minutes=(1, 2))) for s in (3, 4)]
    jobs = off_topic.jobs(videos, share=1.0)
    assert len(jobs) == 2 and jobs == off_topic.jobs(videos, share=1.0)
    assert off_topic.jobs(videos, share=0.0) == []
    assert {j.item.target["intent"]["ask"] for j in jobs} == {"unknown"}
    traces = asyncio.run(data.run_oracle(jobs, tmp_path, concurrency=2))
    assert [t["status"] for t in traces] == ["answered"] * 2
    for trace in traces:
        assert trace["answer"].startswith(HONEST), trace["answer"]
        turns = [c["completion"]["text"] for c in trace["model_calls"] if call_role(c) == "main"]
        assert len(turns) == 2, "the turn that dispatches the crops, then the answer"
        assert all(t.startswith(UNKNOWN) for t in turns), turns
