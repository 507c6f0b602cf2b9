"""The graph speaks chat: a plain `messages` input runs it, the answer and the tool calls come
back as LangChain messages, follow-ups reuse the video, and bad paths are refused in words."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from graphs.builder import compile_graph
from graphs.context import Context
from tests.support.fakes import ScriptedModel, calls

SMALL = dict(overview_frames=4, overview_max_pixels=4096, crop_max_frames=4, crop_max_pixels=4096)
ANSWER = "<think>The note says red.</think><answer>A</answer>"


def chat_graph(model, board, roots):
    return compile_graph(model, board, checkpointer=InMemorySaver(), media_roots=roots)


async def say(graph, thread: str, text: str, **context):
    config = {"configurable": {"thread_id": thread}}
    return await graph.ainvoke(
        {"messages": [HumanMessage(content=text)]}, config, context=Context(**{**SMALL, **context})
    )


async def test_a_chat_message_naming_the_video_runs_the_graph(needle_video, board):
    video = Path(needle_video.path)
    model = ScriptedModel(main=[calls((0, 20), (20, 40)), ANSWER])
    graph = chat_graph(model, board, [video.parent])
    out = await say(graph, "t1", f"{video.name} What colour is the shape?\nA. red\nB. blue")
    assert out["status"] == "answered" and out["answer"] == "A"
    human, asking, *results, answer = out["messages"]
    assert isinstance(human, HumanMessage) and isinstance(answer, AIMessage)
    assert [c["args"] for c in asking.tool_calls] == [
        {"start_time": 0, "end_time": 20},
        {"start_time": 20, "end_time": 40},
    ]
    assert all(isinstance(r, ToolMessage) for r in results)
    assert [r.tool_call_id for r in results] == [c["id"] for c in asking.tool_calls]
    assert results[0].content == "a red circle at 12 seconds"  # the sub-agent's note
    for message in (asking, answer):  # plain words: no protocol markup reaches a chat client
        assert "<think>" not in message.content and "<tool_call>" not in message.content
    assert asking.content == "I should look closer."
    assert answer.content == "A. red"  # the option letter in words
    first = model.main_requests[0]
    assert "Question: What colour is the shape?" in first.text() and "A. red" in first.text()
    assert video.name not in first.text().split("Question:")[1]  # the path is not the question
    assert board.run(out["run_id"])["status"] == "answered"


async def test_a_follow_up_reuses_the_video_and_asks_only_its_own_question(needle_video, board):
    video = Path(needle_video.path)
    model = ScriptedModel(main=[calls((0, 20)), ANSWER])
    graph = chat_graph(model, board, [video.parent])
    first = await say(graph, "t2", f"{video} What colour is the shape?")
    model._main_turns = 0
    second = await say(graph, "t2", "And what shape is it?")
    assert second["status"] == "answered" and second["run_id"] != first["run_id"]
    humans = [m.content for m in second["messages"] if isinstance(m, HumanMessage)]
    assert humans == [f"{video} What colour is the shape?", "And what shape is it?"]
    follow_up = model.main_requests[2]  # the second question's first turn
    assert [m["role"] for m in follow_up.messages] == ["system", "user"]  # nothing carried over
    assert "And what shape is it?" in follow_up.text() and "What colour" not in follow_up.text()
    assert follow_up.request.frames[0] == model.main_requests[0].request.frames[0]  # same overview
    runs = {run["run_id"]: run for run in board.runs()}
    assert runs[first["run_id"]]["status"] == runs[second["run_id"]]["status"] == "answered"
    assert board.trace(second["run_id"])["question"] == "And what shape is it?"
    assert len(board.trace(second["run_id"])["tool_calls"]) == 1  # its own calls only


async def test_earlier_notes_reach_a_follow_up_only_when_asked(needle_video, board):
    video = Path(needle_video.path)
    for earlier, expect in ((False, False), (True, True)):
        model = ScriptedModel(main=[calls((0, 20)), ANSWER])
        graph = chat_graph(model, board, [video.parent])
        thread = f"notes-{earlier}"
        await say(graph, thread, f"{video} What colour?", earlier_notes=earlier)
        model._main_turns = 1  # answer the follow-up at once
        await say(graph, thread, "Where is it?", earlier_notes=earlier)
        text = model.main_requests[-1].text()
        assert ("a red circle at 12 seconds" in text) is expect


async def test_paths_outside_the_roots_urls_and_no_path_are_refused_in_words(
    needle_video, board, tmp_path
):
    video = Path(needle_video.path)
    model = ScriptedModel()
    graph = chat_graph(model, board, [tmp_path / "media"])
    (tmp_path / "media").mkdir()
    cases = {
        f"{video} What colour?": "outside the media roots",
        "https://example.com/v.mp4 What colour?": "nothing is fetched",
        "What colour is it?": "Which video should I look at?",
    }
    for n, (text, expected) in enumerate(cases.items()):
        out = await say(graph, f"refused-{n}", text)
        assert out["status"] == "failed" and expected in out["messages"][-1].content
    assert model.requests == [] and board.runs() == []


async def test_the_older_video_and_question_input_still_works(needle_video, board):
    model = ScriptedModel(main=[ANSWER])
    graph = chat_graph(model, board, [])
    out = await graph.ainvoke(
        {"video": needle_video.path, "question": "Which colour?", "options": ["A. red", "B. x"]},
        {"configurable": {"thread_id": "legacy"}},
        context=Context(**SMALL),
    )
    assert out["answer"] == "A"
    assert [m.type for m in out["messages"]] == ["human", "ai"]
    assert out["messages"][0].content == "Which colour?"
