"""The graph over real HTTP: parallel sub-agents overlap, and a dead endpoint is a failed run."""

from __future__ import annotations

import time

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.client.llm import OpenAIChatModel
from agents.question import Question
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from serving.launch import free_port
from testing.scripted import Reply, ScriptedServer, role_of, turn_of
from tests.support.fakes import calls

pytestmark = pytest.mark.integration
SMALL = Context(
    overview_frames=4, crop_max_frames=4, overview_max_pixels=4096, crop_max_pixels=4096
)
WINDOWS = [(0, 15), (15, 30), (30, 45), (45, 60)]


def slow_subagents(body: dict) -> Reply:
    """Sub-agents answer after 1 s; the main agent answers at once."""
    if role_of(body) == "sub_agent":
        return Reply("a red triangle", delay_s=1.0)
    if turn_of(body):
        return Reply("<think>\nred</think><answer>A</answer>")
    return Reply(calls(*WINDOWS)[len("<think>") :])


async def run(base_url, board, video, **kw):
    async with OpenAIChatModel(
        base_url,
        max_retries=kw.pop("max_retries", 0),
        backoff_s=0.01,
        timeout=kw.pop("timeout", 30),
    ) as llm:
        graph = compile_graph(llm, board, checkpointer=InMemorySaver())
        return await run_question(
            graph, board, video_path=video.path, question=Question("Colour?"), context=SMALL, **kw
        )


async def test_four_parallel_calls_overlap(needle_video, board):
    marks: dict[str, float] = {}

    def on_update(node, values):
        marks.setdefault(node, time.perf_counter())

    with ScriptedServer(slow_subagents) as server:
        result = await run(server.base_url, board, needle_video, on_update=on_update)
    assert result.status == "answered" and result.answer == "A"
    sub_bodies = [b for b in server.requests if role_of(b) == "sub_agent"]
    assert len(sub_bodies) == 4
    turn = marks["collect"] - marks["main_agent"]
    assert 1.0 <= turn < 2.0, f"the 4 sub-agents took {turn:.2f} s: they did not overlap"
    assert result.trace["cost"]["prompt_tokens"] > 0


async def test_a_server_that_is_down_gives_a_failed_run(needle_video, board):
    result = await run(f"http://127.0.0.1:{free_port()}/v1", board, needle_video)
    assert result.status == "failed" and result.answer is None
    assert "127.0.0.1" in result.error
    assert board.run(result.run_id)["status"] == "failed"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Reply("overloaded", status=500), "500"),
        (Reply(raw_body=b"<html>not json</html>"), "malformed"),
        (Reply("slow", delay_s=2.0), "timed out"),
    ],
)
async def test_server_errors_after_retries_are_failed_runs(needle_video, board, reply, expected):
    with ScriptedServer([reply]) as server:
        result = await run(server.base_url, board, needle_video, max_retries=1, timeout=0.5)
    assert result.status == "failed"
    assert expected in result.error.lower()
    assert len(server.requests) == 2  # one try and one retry
