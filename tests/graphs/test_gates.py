"""Board modes, the verify gate and the length gate, with a scripted model."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.question import Question
from agents.scoring.length import answer_length, inherently_short, meets_min_length
from agents.verify import parse_verdict
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from tests.support.fakes import ScriptedModel, calls

SMALL = dict(overview_frames=4, overview_max_pixels=4096, crop_max_frames=4, crop_max_pixels=4096)
VERDICT_BY_WINDOW = {
    "0.0 - 10.0": "SUPPORTED",
    "10.0 - 20.0": "UNSUPPORTED",
    "20.0 - 30.0": "UNCERTAIN",
    "30.0 - 40.0": "I think so",
}


def sub(request):
    text = request.text()
    window = text.split("window ")[1].split(" seconds")[0]
    return f"note about {window}"


def verify(request):
    window = request.text().split("note about ")[1].split("\n")[0]
    return VERDICT_BY_WINDOW.get(window, "SUPPORTED")


async def ask(model, board, video, question="What colour is it?", options=None, **context):
    graph = compile_graph(model, board, checkpointer=InMemorySaver())
    return await run_question(
        graph,
        board,
        video_path=video.path,
        question=Question(question, options=tuple(options or ())),
        context=Context(**SMALL, **context),
    )


def last_tool_text(model, turn):
    return model.main_requests[turn].text()


@pytest.mark.parametrize(
    ("text", "verdict", "clean"),
    [
        ("SUPPORTED", "SUPPORTED", True),
        (" unsupported.", "UNSUPPORTED", True),
        ("Uncertain", "UNCERTAIN", True),
        ("yes", "UNCERTAIN", False),
        ("", "UNCERTAIN", False),
    ],
)
def test_verdict_parsing(text, verdict, clean):
    assert parse_verdict(text) == (verdict, clean)


async def test_verified_mode_stores_every_verdict_and_passes_only_supported_notes(
    needle_video, board
):
    windows = [(0, 10), (10, 20), (20, 30), (30, 40)]
    model = ScriptedModel(
        main=[calls(*windows), "<think>x</think><answer>A</answer>"], sub=sub, verify=verify
    )
    # the gate alone, as the board study's reference has it: no second look
    result = await ask(model, board, needle_video, board_mode="verified", verify_rereads=0)
    notes = {n.key: n.verdict for n in board.notes(result.run_id)}
    assert notes == {
        "t0c0": "SUPPORTED",
        "t0c1": "UNSUPPORTED",
        "t0c2": "UNCERTAIN",
        "t0c3": "UNCERTAIN",
    }, "garbage verdicts are stored as UNCERTAIN"
    responses = last_tool_text(model, 1)
    assert "note about 0.0 - 10.0" in responses
    for hidden in ("10.0 - 20.0", "20.0 - 30.0", "30.0 - 40.0"):
        assert f"note about {hidden}" not in responses
    assert responses.count("No verified finding") == 3
    assert len(model.verify_requests) == 4
    assert all(
        r.params.temperature == 0 and r.params.max_tokens <= 4 for r in model.verify_requests
    )


async def test_the_gate_passes_through_outside_verified_mode(needle_video, board):
    model = ScriptedModel(main=[calls((10, 20)), "<think>x</think><answer>A</answer>"], sub=sub)
    result = await ask(model, board, needle_video, board_mode="shared")
    assert model.verify_requests == []
    assert board.notes(result.run_id)[0].verdict is None
    assert "note about 10.0 - 20.0" in last_tool_text(model, 1)


@pytest.mark.parametrize(
    ("mode", "seen"),
    [("isolated", []), ("shared", ["0.0 - 10.0", "10.0 - 20.0"]), ("verified", ["0.0 - 10.0"])],
)
async def test_board_modes_change_what_a_later_subagent_reads(needle_video, board, mode, seen):
    model = ScriptedModel(
        main=[calls((0, 10), (10, 20)), calls((40, 50)), "<think>x</think><answer>A</answer>"],
        sub=sub,
        verify=verify,
    )
    await ask(model, board, needle_video, board_mode=mode)
    later = next(r for r in model.sub_requests if "window 40.0 - 50.0" in r.text()).text()
    for window in ("0.0 - 10.0", "10.0 - 20.0"):
        assert (f"note about {window}" in later) == (window in seen)
    assert ("Notes other agents wrote" in later) == bool(seen)


async def test_verify_calls_count_their_frames_in_the_cost(needle_video, board):
    model = ScriptedModel(
        main=[calls((0, 10)), "<think>x</think><answer>A</answer>"], sub=sub, verify=verify
    )
    result = await ask(model, board, needle_video, board_mode="verified")
    cost = result.trace["cost"]
    # overview 4 frames x 2 main turns + 4 sub-agent frames + the same 4 frames re-encoded
    assert cost["frames_encoded"] == 8 + 4 + 4 and cost["model_calls"] == 4


def frame_times(request) -> list[float]:
    (ref,) = [p for p in request.messages[-1]["content"] if p.get("type") == "frames"]
    return ref["timestamps"]


async def test_the_verifier_sees_only_the_frames_a_note_cites(needle_video, board):
    def sighting(request):
        t = frame_times(request)
        return f"Seen: red circle from {t[1]:g} to {t[3]:g} seconds; the circle is red."

    model = ScriptedModel(
        main=[calls((0, 10)), "<think>x</think><answer>A</answer>"],
        sub=sighting,
        verify=lambda _: "SUPPORTED",
    )
    result = await ask(model, board, needle_video, board_mode="verified")
    (window,), (check,) = model.sub_requests, model.verify_requests
    assert frame_times(check) == frame_times(window)[1:3]
    assert result.trace["cost"]["frames_encoded"] == 8 + 4 + 2


SHORT = "<think>x</think><answer>It rises.</answer>"
LONG = "<think>x</think><answer>" + "- point\n" * 6 + "</answer>"


async def test_a_short_open_ended_answer_goes_back_once(needle_video, board):
    model = ScriptedModel(main=[SHORT, SHORT])
    result = await ask(
        model, board, needle_video, question="Why does the shape move?", length_gate=True
    )
    assert len(model.main_requests) == 2, "one retry, then the answer stands"
    assert "at least 6 bullet points or 80 words" in model.main_requests[1].text()
    assert result.status == "answered" and result.answer == "It rises."
    model = ScriptedModel(main=[SHORT, LONG])
    result = await ask(
        model, board, needle_video, question="Why does the shape move?", length_gate=True
    )
    assert answer_length(result.answer).bullets == 6


@pytest.mark.parametrize(
    ("question", "options", "gate"),
    [
        ("Why does the shape move?", None, False),
        ("How many shapes appear?", None, True),
        ("Which colour?", ["A. red", "B. blue"], True),
    ],
)
async def test_the_length_gate_lets_answers_through(needle_video, board, question, options, gate):
    model = ScriptedModel(main=[SHORT])
    await ask(model, board, needle_video, question=question, options=options, length_gate=gate)
    assert len(model.main_requests) == 1


def test_the_length_rule():
    assert inherently_short("Is the light on?") and not inherently_short("Describe the scene")
    assert meets_min_length(" ".join(["w"] * 80), "Describe the scene")
    assert not meets_min_length(" ".join(["w"] * 79), "Describe the scene")
    assert meets_min_length("\n".join(f"{i}. x" for i in range(6)), "Describe the scene")


async def test_two_agent_mode_scans_the_whole_video_then_the_checker_answers(needle_video, board):
    model = ScriptedModel(main=["<think>x</think><answer>A</answer>"], sub=sub)
    result = await ask(model, board, needle_video, dispatch="none", scanner_first=True)
    assert result.status == "answered" and len(model.sub_requests) == 1
    assert "window 0.0 - 60.0" in model.sub_requests[0].text()
    first = model.main_requests[0].text()
    assert "Notes a scanner agent wrote" in first and "note about 0.0 - 60.0" in first
    assert [n.key for n in board.notes(result.run_id)] == ["t-1c0"]


async def test_the_scanner_note_goes_through_the_verify_gate(needle_video, board):
    model = ScriptedModel(
        main=["<think>x</think><answer>A</answer>"], sub=sub, verify=lambda request: "UNSUPPORTED"
    )
    result = await ask(
        model, board, needle_video, dispatch="none", scanner_first=True, board_mode="verified"
    )
    first = model.main_requests[0].text()
    assert "note about" not in first and "withheld" in first
    assert board.notes(result.run_id)[0].verdict == "UNSUPPORTED"
