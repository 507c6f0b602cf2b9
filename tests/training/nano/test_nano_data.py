"""paravt-nano's SFT data: oracle runs of the real graph, their rows, the rebuild's first steps."""

from __future__ import annotations

import doctest
import json
from collections import Counter
from pathlib import Path

import pytest

from agents import benchmark
from agents.media import frame_store
from agents.protocol import parse
from agents.scoring.intervals import parse_interval
from agents.scoring.text import normalize_answer
from agents.synthetic import Needle, QAItem, SyntheticVideo
from graphs.runs.traces import call_role
from training.nano import data, intents, loss, notes, oracle, reasoning, train, warmup
from training.nano.oracle import NO_SHAPES, window_note
from training.nano.reasoning import sightings

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def oracle_traces(tmp_path_factory):
    root = tmp_path_factory.mktemp("nano-data")
    videos = [(1.0, *benchmark.generate(root / "v", seed, minutes=(1, 2))) for seed in (3, 4, 5, 6)]
    import asyncio

    jobs = data.jobs_for(videos)
    return jobs, asyncio.run(data.run_oracle(jobs, root, concurrency=4))


def test_a_window_note_names_each_needle_with_its_first_frame_and_the_frame_after():
    video = SyntheticVideo(
        "v.mp4", 0, 60.0, 1.0, 128, 96, (Needle(20.0, 23.0, "red", "circle", ""),)
    )
    assert window_note(video, [15.0, 18.0, 21.0, 24.0, 27.0], 30.0) == (
        "Seen: red circle from 21 to 24 seconds; the circle is red."
    )
    assert window_note(video, [15.0, 18.0, 21.0], 22.0).startswith(
        "Seen: red circle from 21 to 22 seconds;"
    )
    assert window_note(video, [0.0, 5.0, 10.0], 15.0) == NO_SHAPES
    assert sightings(
        [
            "red circle from 21 to 24 seconds.",
            "blue cross from 3 to 5 seconds.",
            "red circle from 24 to 27 seconds.",
        ]
    ) == {("blue", "cross"): (3.0, 5.0), ("red", "circle"): (21.0, 27.0)}


def _benchmark_run(job) -> bool:
    """A benchmark question asked with its prompt on a plain board."""
    return not job.chat and job.board_mode == "isolated" and "intent" not in job.item.target


def test_oracle_runs_answer_every_question_right_in_the_graphs_trace_format(oracle_traces):
    jobs, traces = oracle_traces
    assert len(traces) == len(jobs) and {j.dispatch for j in jobs} == {"parallel", "none"}
    for job, trace in zip(jobs, traces, strict=True):
        assert trace["status"] == "answered" and trace["video"] == job.video.path
        main = [c for c in trace["model_calls"] if c["agent"] == "main"]
        subs = [c for c in trace["model_calls"] if call_role(c) == "sub_agent"]
        first = parse(main[0]["prefill"] + main[0]["completion"]["text"])
        assert first.well_formed
        assert first.think.startswith("The question asks "), first.think
        if not _benchmark_run(job):
            continue
        if job.dispatch == "none":
            assert not subs and len(main) == 1
            continue
        item = job.item
        if first.answer is None:  # four parallel calls covering the video, then the answer
            assert [c.arguments for c in first.tool_calls] == [
                {
                    "start_time": round(q * job.video.duration / 4),
                    "end_time": round((q + 1) * job.video.duration / 4),
                }
                for q in range(4)
            ]
            assert len(subs) == 4 and len(main) == 2
        answer = trace["answer"]
        if item.kind == "grounding":
            start, end = parse_interval(answer)
            assert answer == f"from {start:g} to {end:g} seconds", answer
            t = item.target
            overlap = min(end, t["end"]) - max(start, t["start"])
            union = max(end, t["end"]) - min(start, t["start"])
            assert overlap / union >= 0.3, (answer, t)
        elif item.kind == "open_ended":  # "the red square": the same answer once normalised
            assert normalize_answer(answer) == normalize_answer(item.answer)
        else:
            assert answer == item.answer


def test_a_verified_board_rejects_each_misread_note_and_the_main_agent_looks_again(
    oracle_traces,
):
    jobs, traces = oracle_traces
    verified = [(j, t) for j, t in zip(jobs, traces, strict=True) if j.board_mode == "verified"]
    assert verified and any(t["misread"] for _, t in verified), "the noise misread some notes"
    for job, trace in verified:
        verdicts = {
            c["agent"].split(":", 1)[1]: c["completion"]["text"]
            for c in trace["model_calls"]
            if c["role"] == "verifier"
        }
        subs = [c["agent"] for c in trace["model_calls"] if c["role"] == "sub_agent"]
        assert sorted(verdicts) == sorted(a.split(":", 1)[1] for a in subs)
        for agent in subs:
            wrong = agent in trace["misread"]
            assert verdicts[agent.split(":", 1)[1]] == ("UNSUPPORTED" if wrong else "SUPPORTED")
        rejected = {n["start"] for n in trace["notes"] if n["verdict"] == "UNSUPPORTED"}
        first_turn = [n for n in trace["notes"] if n["turn"] == 0]
        asked_again = {n["start"] for n in trace["notes"] if n["turn"] == 1}
        if {n["start"] for n in first_turn if n["verdict"] == "UNSUPPORTED"}:
            assert asked_again == {n["start"] for n in first_turn if n["verdict"] != "SUPPORTED"}
        assert rejected <= {n["start"] for n in trace["notes"]}
        if job.length_gate:  # the open answer came back as too short, and was kept
            mains = [c for c in trace["model_calls"] if c["role"] == "main"]
            last = parse(mains[-1]["prefill"] + mains[-1]["completion"]["text"])
            assert last.think.endswith("The answer is complete.")
            assert (
                last.answer == parse(mains[-2]["prefill"] + mains[-2]["completion"]["text"]).answer
            )


def test_a_two_agent_run_answers_from_the_scanners_note_of_the_whole_video(oracle_traces):
    jobs, traces = oracle_traces
    runs = [(j, t) for j, t in zip(jobs, traces, strict=True) if j.scanner_first]
    assert runs
    for job, trace in runs:
        (scanner,) = [n for n in trace["notes"] if n["turn"] == -1]
        assert (scanner["start"], scanner["end"]) == (0.0, job.video.duration)
        mains = [c for c in trace["model_calls"] if c["role"] == "main"]
        assert len(mains) == 1 and "Notes a scanner agent wrote" in str(mains[0]["messages"])


def test_rows_carry_the_main_conversation_each_sub_agent_note_and_the_verifier(
    oracle_traces, tmp_path
):
    _, traces = oracle_traces
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps({**t, "noise": 1.0}) + "\n" for t in traces))
    rows = data.sft_rows(path)
    mains = [r for r in rows if r["agent"] == "main"]
    subs = [r for r in rows if r["agent"].startswith("sub:")]
    checks = [r for r in rows if r["agent"].startswith("verify:")]
    assert len(mains) == len(traces)
    assert subs and all(len(r["images"]) == 12 for r in subs)
    conversation = mains[0]["messages"]
    assert [m["role"] for m in conversation][:2] == ["system", "user"]
    assert conversation[-1]["role"] == "assistant"
    assert all(r["noise"] == 1.0 for r in rows)
    misread = {(t["run_id"], a) for t in traces for a in t["misread"]}
    assert misread and not {(r["run_id"], r["agent"]) for r in subs} & misread, (
        "a note the noise misread is never a sub-agent's training target"
    )
    verdicts = Counter(r["messages"][-1]["content"][0]["text"] for r in checks)
    assert verdicts["SUPPORTED"] and verdicts["UNSUPPORTED"], verdicts
    assert set(verdicts) <= {"SUPPORTED", "UNSUPPORTED", "UNCERTAIN"}
    assert all(0 < len(r["images"]) == len(r["frame_labels"]) <= 12 for r in checks)
    made = [r for r in checks if "right_note" in r]
    sightings = [r for r in made if "wrong" not in r and r["right_note"].startswith("Seen:")]
    # a span moved past a short window's end cites none of its frames: the gate shows them all
    moved = [r for r in made if r.get("wrong") == "time" and _sighting(r)[2] < r["window"][2]]
    assert sightings and moved
    assert all(_sighting(r)[:2] in _shown(r) for r in sightings), "its frames show its needle"
    assert all(_sighting(r)[:2] not in _shown(r) for r in moved), "a moved span's frames do not"


def _sighting(row) -> tuple[str, str, float]:
    """The colour, shape and start of the first sighting a verifier row's note states."""
    note = row["messages"][1]["content"][-1]["text"].split("Note: ")[1]
    colour, shape, _, start = note.split("Seen: ")[1].split()[:4]
    return colour, shape, float(start)


def _shown(row) -> set[tuple[str, str]]:
    """The needles a row's frames show, as colour and shape."""
    return {
        (benchmark.COLOURS[c - 1], benchmark.SHAPES[s - 1]) for c, s in row["frame_labels"] if c
    }


def test_note_rows_see_the_frames_the_graph_decodes_for_each_window(oracle_traces):
    jobs, traces = oracle_traces
    for job, trace in zip(jobs, traces, strict=True):
        for call in (c for c in trace["model_calls"] if call_role(c) == "sub_agent"):
            ref = next(p for p in call["messages"][-1]["content"] if p.get("type") == "frames")
            note = next(
                n for n in trace["notes"] if f"sub:{n['turn']}:{n['index']}" == call["agent"]
            )
            decoded = frame_store.encode_frames(
                ref["video"], tuple(ref["timestamps"]), ref["max_pixels"]
            )
            times = oracle.window_frame_times(note["start"], note["end"], job.video.duration)
            assert times == [f.timestamp for f in decoded]
            if call["agent"] not in trace["misread"]:
                assert call["completion"]["text"] == window_note(job.video, times, note["end"])


THREE = {
    ("red", "square"): (3.0, 5.0),
    ("blue", "circle"): (40.0, 42.0),
    ("green", "cross"): (80.0, 82.0),
}


@pytest.mark.parametrize(
    ("kind", "question", "checked", "answer"),
    [
        (
            "colour",
            "What colour is the circle that appears in the video?",
            [
                "last is the green cross; the circle? no",
                "first is the red square; the circle? no",
                "other is the blue circle; the circle? yes",
            ],
            "B",
        ),
        (
            "shape",
            "What shape is the red object that appears in the video?",
            [
                "last is the green cross; the red one? no",
                "first is the red square; the red one? yes",
            ],
            "A",
        ),
        (
            "ground",
            "When does the green cross appear? Give start and end in seconds.",
            ["last is the green cross from 80 to 82 seconds; the green cross? yes"],
            "from 80 to 82 seconds",
        ),
    ],
)
def test_a_lookup_checks_the_last_needle_then_the_first_then_the_others(
    kind, question, checked, answer
):
    """The main agent never looks a note up by its key: it holds the notes' needles against
    the question's one by one, by position, and stops at the one that is it."""
    options = {"colour": ("A. red", "B. blue"), "shape": ("A. square", "B. circle")}
    item = QAItem(f"v-mc-{kind}", "x", question, options.get(kind, ()), answer, {})
    think, said = oracle.reasoning(item, THREE)
    lines = think.split("\n")
    assert lines[: len(checked)] == [f"The {line}." for line in checked], lines
    assert said == answer
    if kind != "ground":  # the fact line copies the value from the yes line just above it
        assert lines[len(checked)] in ("So the circle is blue.", "Seen: red square."), lines


def test_a_lookup_whose_needle_the_notes_do_not_report_has_no_oracle_turn():
    item = QAItem("v-ground", "grounding", "When does the yellow circle appear?", (), "", {})
    assert oracle.reasoning(item, THREE) is None


def test_note_rows_hold_the_question_the_notes_and_the_oracles_turns():
    rows = list(notes.note_rows(range(40, 45)))
    assert all(r["images"] == [] and r["agent"] == "notes" for r in rows)
    plain = [r for r in rows if r["source"] == "plan"]
    kinds = [r["question_id"].rsplit("-", 1)[-1] for r in plain]
    assert kinds.count("ground") == kinds.count("open") == 5, kinds  # one of each per video
    assert sum("-p" in r["question_id"] for r in plain) >= 8, "two other wordings a video"
    for row in plain:
        question, responses, turn = (m["content"][0]["text"] for m in row["messages"])
        assert (
            question.startswith(("Question: ", "What", "How", "Which", "When"))
            or "-p" in (row["question_id"])
        )
        assert responses.count("<tool_response>") == 4 and "<answer>" in turn
        assert parse(turn).well_formed and parse(turn).think.startswith("The question asks ")
    verified = [r for r in rows if r["source"] == "plan-verified"]
    assert len(verified) == 5
    for row in verified:
        texts = [m["content"][0]["text"] for m in row["messages"]]
        assert "No verified finding for" in texts[1]
        again = parse(texts[2])
        assert again.tool_calls and again.answer is None and "I will look again." in again.think
        assert parse(texts[4]).answer is not None
    gated = [r for r in rows if r["source"] == "plan-length"]
    assert len(gated) == 1  # seed 40: every fifth plan
    first, kept = (parse(m["content"][0]["text"]) for m in gated[0]["messages"][2::2])
    assert (
        first.answer == kept.answer and "too short" in gated[0]["messages"][3]["content"][0]["text"]
    )
    with pytest.raises(ValueError, match="test split"):
        list(notes.note_rows([benchmark.SPLIT_SEEDS["test"]]))


def test_note_rows_can_ground_every_needle_of_a_plan():
    """The ablation's --every-needle rows: one grounding row per needle, the benchmark's
    wording, the other questions as they were."""
    plain = list(notes.note_rows([5], phrased=0, extras=False))
    every = list(notes.note_rows([5], every_needle_grounded=True, phrased=0, extras=False))
    needles = notes.plan_video(5).needles
    grounded = [r for r in every if r["question_id"].endswith("-ground")]
    assert len(grounded) == len(needles) == 3
    for row, needle in zip(grounded, needles, strict=True):
        question, _, turn = (m["content"][0]["text"] for m in row["messages"])
        assert question.startswith(f"When does the {needle.color} {needle.shape} appear?")
        assert parse(turn).answer.startswith("from ")
    others = [r for r in plain if not r["question_id"].endswith("-ground")]
    assert others == [r for r in every if not r["question_id"].endswith("-ground")]


@pytest.mark.parametrize(
    "module", [intents, loss, notes, oracle, reasoning, train, warmup], ids=lambda m: m.__name__
)
def test_the_nano_modules_doctests_pass(module):
    result = doctest.testmod(module)
    assert result.attempted >= 1 and result.failed == 0


def test_where_no_option_fits_the_notes_the_oracle_still_answers_with_a_letter(tmp_path):
    """A two-agent scanner can see part of the video: its note fits no option of a
    'what happens' question. The oracle's turn says so and answers (the rebuild's data stage
    stopped on a turn without an answer)."""
    import random

    from training.nano import phrasing

    video, _ = benchmark.generate(tmp_path, 11, minutes=(1, 2))
    item = phrasing.phrased(video, random.Random(0), 0, group="describe", options=True)
    assert item.options
    truth = oracle.Truth(video, item, chat=True)
    seen = next(
        s
        for s in (("green", "cross"), ("yellow", "square"), ("blue", "circle"))
        if not any(f"{s[0]} {s[1]}" in option for option in item.options)
    )
    spans = {seen: (30.0, 34.0)}  # what a scanner of part of the video might report
    assert oracle.reasoning(item, spans, chat=True)[1] is None  # the case: no option fits
    turn = parse(oracle.answer_turn(truth, "The question asks what happens.", spans, "letter"))
    assert turn.well_formed and turn.answer == item.answer
    assert "No option fits the notes." in turn.think
