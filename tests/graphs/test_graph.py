"""Graph logic with a scripted model: fan-out, call order, caps, forced answers, failures."""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.media.video import VideoError
from agents.question import Question
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from tests.support.fakes import ScriptedModel, calls, endpoint_down
from tests.support.graph import OPTIONS, QUESTION, SMALL, ask, tool_responses


async def test_parallel_turn_fans_out_and_answers(needle_video, board):
    model = ScriptedModel(
        main=[
            calls((0, 20), (20, 40), (40, 60)),
            "<think>The notes say red.</think><answer>A</answer>",
        ]
    )
    result = await ask(model, board, needle_video)
    assert result.status == "answered" and result.answer == "A"
    assert len(model.sub_requests) == 3
    assert [r.prefill for r in model.main_requests] == ["<think>\n", "<think>\n"]
    assert tool_responses(model.main_requests[1]).count("<tool_response>") == 3
    notes = board.notes(result.run_id)
    assert [(n.start, n.end) for n in notes] == [(0, 20), (20, 40), (40, 60)]
    trace = board.trace(result.run_id)
    assert trace["cost"]["model_calls"] == 5 and trace["cost"]["tool_calls"] == 3
    assert trace["turns"] == 1 and trace["status"] == "answered"
    assert trace["overview"]["timestamps"] == [7.5, 22.5, 37.5, 52.5]


async def test_tool_responses_keep_call_order_when_subagents_finish_out_of_order(
    needle_video, board
):
    def sub(request):
        text = tool_text(request)
        start = float(text.split("window ")[1].split(" ")[0])
        return f"window starting {start:g}", 0.3 - start / 100  # later windows finish first

    model = ScriptedModel(
        main=[calls((0, 10), (10, 20), (20, 30)), "<think>x</think><answer>B</answer>"], sub=sub
    )
    await ask(model, board, needle_video)
    text = tool_responses(model.main_requests[1])
    assert text.index("starting 0") < text.index("starting 10") < text.index("starting 20")


def tool_text(request) -> str:
    return "".join(p.get("text", "") for p in request.messages[-1]["content"])


async def test_calls_beyond_the_cap_are_refused_with_a_message(needle_video, board):
    windows = [(i * 5, i * 5 + 5) for i in range(7)]
    model = ScriptedModel(main=[calls(*windows), "<think>x</think><answer>C</answer>"])
    await ask(model, board, needle_video, Context(**SMALL, max_parallel=5))
    assert len(model.sub_requests) == 5
    responses = tool_responses(model.main_requests[1])
    assert responses.count("<tool_response>") == 7
    # the whole sentence the model reads: this protocol's text, which traces and SFT rows keep
    refused = (
        "crop_video: refused, at most 5 call(s) per turn; this call was not run. "
        "Ask again next turn if you still need this window."
    )
    assert responses.count(refused) == 2


@pytest.mark.parametrize(
    ("window", "message"),
    [
        ((30, 10), "start_time"),
        (("nan", 10), "nan"),
        ((-5, 10), "negative"),
        ((100, 120), "past the end"),
    ],
)
async def test_bad_windows_go_back_to_the_model_and_the_run_goes_on(
    needle_video, board, window, message
):
    model = ScriptedModel(main=[calls(window), "<think>x</think><answer>A</answer>"])
    result = await ask(model, board, needle_video)
    assert result.status == "answered"
    assert model.sub_requests == []
    assert message in tool_responses(model.main_requests[1]).lower()


async def test_malformed_json_and_unknown_tools_get_error_responses(needle_video, board):
    turn = (
        '<think>look</think><tool_call>{"name": "crop_video", "arguments": {"start_time": 1,'
        '</tool_call><tool_call>{"name": "zoom", "arguments": {}}</tool_call>'
    )
    model = ScriptedModel(main=[turn, "<think>x</think><answer>D</answer>"])
    result = await ask(model, board, needle_video)
    assert result.answer == "D" and model.sub_requests == []
    responses = tool_responses(model.main_requests[1])
    assert responses.count("<tool_response>") == 2
    assert "zoom" in responses
    assert result.trace["violations"][0], "the parser should name the format violations"


async def test_last_turn_is_forced_and_a_model_that_keeps_calling_gets_no_answer(
    needle_video, board
):
    model = ScriptedModel(main=[calls((0, 10))])
    result = await ask(model, board, needle_video, Context(**SMALL, max_turns=2))
    assert len(model.main_requests) == 3
    assert "last turn" not in tool_responses(model.main_requests[1])
    assert "last turn: do not call tools" in tool_responses(model.main_requests[2])
    assert len(model.sub_requests) == 2
    assert result.status == "no_answer" and result.answer is None
    assert result.final_text.startswith("<think>")


async def test_dispatch_none_offers_no_tools_and_runs_none(needle_video, board):
    model = ScriptedModel(main=[calls((0, 10))])
    result = await ask(model, board, needle_video, Context(**SMALL, dispatch="none"))
    system = model.main_requests[0].messages[0]["content"]
    assert "<tools>" not in system and "crop_video" not in system
    assert model.sub_requests == [] and len(model.main_requests) == 1
    assert result.status == "no_answer"


async def test_sequential_dispatch_serves_one_call_per_turn(needle_video, board):
    model = ScriptedModel(main=[calls((0, 10), (10, 20)), "<think>x</think><answer>A</answer>"])
    await ask(model, board, needle_video, Context(**SMALL, dispatch="sequential"))
    assert len(model.sub_requests) == 1
    assert "refused, at most 1 call(s)" in tool_responses(model.main_requests[1])


async def test_frames_protocol_returns_window_frames_to_the_main_agent(needle_video, board):
    model = ScriptedModel(main=[calls((0, 8), (30, 34)), "<think>x</think><answer>A</answer>"])
    context = Context(**SMALL, tool_result="frames", crop_fps=1.0)
    result = await ask(model, board, needle_video, context)
    assert model.sub_requests == []
    assert model.main_requests[0].images() == 4
    assert model.main_requests[1].images() == 4 + 4 + 4
    assert result.trace["cost"]["frames_encoded"] == 4 + 12
    assert len(board.notes(result.run_id)) == 2


async def test_state_and_checkpoints_hold_frame_references_not_images(needle_video, board):
    saver = InMemorySaver()
    model = ScriptedModel(main=[calls((0, 10)), "<think>x</think><answer>A</answer>"])
    result = await ask(model, board, needle_video, checkpointer=saver)
    graph = compile_graph(model, board, checkpointer=saver)
    state = await graph.aget_state({"configurable": {"thread_id": result.thread_id}})
    dumped = json.dumps(state.values, default=lambda o: getattr(o, "content", str(o)))
    assert "data:image" not in dumped and "base64" not in dumped
    assert "data:image" not in json.dumps(result.trace)
    assert model.main_requests[0].images() == 4  # but requests carry real images


async def test_an_endpoint_failure_is_a_failed_run_not_an_answer(needle_video, board):
    model = ScriptedModel(main=[endpoint_down()])
    result = await ask(model, board, needle_video)
    assert result.status == "failed" and result.answer is None
    assert "endpoint down" in result.error
    run = board.run(result.run_id)
    assert run["status"] == "failed" and run["answer"] is None
    assert board.trace(result.run_id)["error"] == result.error


@pytest.mark.parametrize("checkpointer", [InMemorySaver, None], ids=["saver", "no-saver"])
async def test_a_failed_run_keeps_the_trace_of_what_it_did_before(
    needle_video, board, checkpointer
):
    """Without a checkpointer (a batch eval, a training rollout) the partial state comes
    from the stream: the same calls and costs as a checkpointer's last state."""
    model = ScriptedModel(main=[calls((0, 10), (10, 20)), endpoint_down()])
    saver = checkpointer() if checkpointer else None
    result = await ask(model, board, needle_video, checkpointer=saver)
    assert result.status == "failed" and "endpoint down" in result.error
    assert result.trace["cost"]["model_calls"] == 3 and result.trace["cost"]["tool_calls"] == 2
    assert [n["content"] for n in result.trace["notes"]] == ["a red circle at 12 seconds"] * 2
    assert board.trace(result.run_id)["cost"] == result.trace["cost"]


async def test_resume_reruns_only_the_failed_subagent(needle_video, board):
    saver = InMemorySaver()
    failing = {"armed": True}

    def sub(request):
        if "10.0 - 20.0" in tool_text(request) and failing["armed"]:
            return endpoint_down(), 0.3  # fails after its siblings have finished
        return "a note"

    first = ScriptedModel(main=[calls((0, 10), (10, 20), (20, 30))], sub=sub)
    result = await ask(first, board, needle_video, checkpointer=saver, thread_id="t1")
    assert result.status == "failed"
    failing["armed"] = False
    second = ScriptedModel(main=["<think>x</think><answer>B</answer>"], sub=sub)
    resumed = await ask(second, board, needle_video, checkpointer=saver, thread_id="t1")
    assert resumed.status == "answered" and resumed.run_id == result.run_id
    assert len(second.sub_requests) == 1, "finished branches must not be asked again"
    assert "10.0 - 20.0" in tool_text(second.sub_requests[0])
    assert len(board.notes(result.run_id)) == 3
    assert board.run(result.run_id)["status"] == "answered"


async def test_a_finished_thread_returns_its_result_without_model_calls(needle_video, board):
    saver = InMemorySaver()
    model = ScriptedModel(main=["<think>x</think><answer>A</answer>"])
    first = await ask(model, board, needle_video, checkpointer=saver, thread_id="done")
    again = await ask(model, board, needle_video, checkpointer=saver, thread_id="done")
    assert again.answer == first.answer and len(model.requests) == 1


async def test_a_missing_video_fails_before_the_run_starts(tmp_path, board):
    model = ScriptedModel()
    graph = compile_graph(model, board, checkpointer=InMemorySaver())
    with pytest.raises(VideoError, match=r"missing\.mp4"):
        await run_question(
            graph, board, video_path=str(tmp_path / "missing.mp4"), question=Question(QUESTION)
        )
    assert model.requests == [] and board.runs() == []


async def test_graph_compiles_without_a_checkpointer_for_studio(needle_video, board):
    model = ScriptedModel(main=[calls((0, 10)), "<think>x</think><answer>A</answer>"])
    graph = compile_graph(model, board)
    out = await graph.ainvoke(
        {"video": needle_video.path, "question": QUESTION}, context=Context(**SMALL)
    )
    assert out["status"] == "answered" and out["answer"] == "A"
    assert set(out) == {
        "messages",
        "run_id",
        "answer",
        "final_text",
        "final_reply",
        "status",
        "calls",
        "tool_results",
        "model_calls",
    }
    assert "overview" not in out and "violations" not in out  # internal state stays inside


async def test_a_benchmark_prompt_replaces_the_question_block(needle_video, board):
    model = ScriptedModel(main=["<think>x</think><answer>B</answer>"])
    official = "Select the best answer.\nWhich colour?\nA. red\nB. blue\nThe best answer is:"
    await ask(
        model, board, needle_video, question=Question(QUESTION, tuple(OPTIONS), prompt=official)
    )
    text = "".join(p.get("text", "") for p in model.main_requests[0].messages[1]["content"])
    assert official in text and "<answer></answer>" in text
    assert "Question: What colour" not in text


async def test_a_still_image_runs_as_a_one_frame_video(tmp_path, board):
    import cv2
    import numpy as np

    chart = tmp_path / "chart.png"
    image = np.full((300, 400, 3), 255, np.uint8)
    cv2.rectangle(image, (50, 100), (120, 280), (0, 0, 255), -1)
    cv2.imwrite(str(chart), image)
    model = ScriptedModel(main=["<think>x</think><answer>Final Answer: 12</answer>"])
    graph = compile_graph(model, board, checkpointer=InMemorySaver())
    result = await run_question(
        graph,
        board,
        video_path=str(chart),
        question=Question("Bar height?"),
        context=Context(overview_frames=16),
    )
    assert result.status == "answered" and result.trace["overview"]["timestamps"] == [0.5]
    assert model.main_requests[0].images() == 1


async def test_an_unreadable_image_is_a_clear_error(tmp_path, board):
    broken = tmp_path / "page.png"
    broken.write_bytes(b"not a png")
    graph = compile_graph(ScriptedModel(), board, checkpointer=InMemorySaver())
    with pytest.raises(VideoError, match=r"page\.png cannot be read as an image"):
        await run_question(graph, board, video_path=str(broken), question=Question("q"))


async def test_subagents_sample_at_their_own_temperature(needle_video, board):
    model = ScriptedModel(main=[calls((0, 10)), "<think>x</think><answer>A</answer>"])
    await ask(model, board, needle_video, Context(**SMALL, subagent_temperature=0.7))
    assert [r.params.temperature for r in model.sub_requests] == [0.7]
    assert model.main_requests[0].params.temperature == 0.0


async def test_the_board_and_the_trace_keep_where_a_question_came_from(needle_video, board):
    model = ScriptedModel(main=[calls((0, 10)), "<think>x</think><answer>A</answer>"])
    source = {"harness": "lmms-eval", "task": "videomme", "split": "test", "doc_id": 7}
    result = await ask(model, board, needle_video, source=source)
    assert board.run(result.run_id)["source"] == source
    assert board.trace(result.run_id)["source"] == source == result.trace["source"]
    other = await ask(
        ScriptedModel(main=["<think>x</think><answer>B</answer>"]), board, needle_video
    )
    assert board.run(other.run_id)["source"] == {} == other.trace["source"]


async def test_a_failed_run_keeps_its_source_too(needle_video, board):
    model = ScriptedModel(main=[endpoint_down()])
    result = await ask(model, board, needle_video, source={"task": "t", "doc_id": 1})
    assert result.status == "failed"
    assert board.run(result.run_id)["source"] == {"task": "t", "doc_id": 1}
    assert board.trace(result.run_id)["source"] == {"task": "t", "doc_id": 1}
