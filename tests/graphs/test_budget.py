"""Settings that cannot fit the served model's context fail at once, before any frame is
decoded or any completion sent, with the settings to change; settings that fit run."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from agents import prompts
from agents.client.llm import OpenAIChatModel
from agents.main_turn import Setting, main_request
from agents.media.sampling import overview_timestamps
from agents.media.video import probe
from agents.question import Question
from agents.sub_turn import Window, subagent_request, window_frames
from graphs.budget import main_prompt_tokens, window_prompt_tokens
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from testing.scripted import ScriptedServer, role_of

ROOT = Path(__file__).resolve().parents[2]
DEMO, NANO_DIR = ROOT / "assets" / "demo" / "needle.mp4", ROOT / "assets" / "paravt-nano"
SMALL = Context(
    overview_frames=4,
    overview_max_pixels=4096,
    crop_max_frames=4,
    crop_max_pixels=4096,
    max_new_tokens=64,
    max_turns=0,
)


async def test_a_run_too_big_for_the_context_fails_before_the_model_is_asked(needle_video, board):
    answer = "<think>\nseen</think><answer>A</answer>"
    with ScriptedServer(answer, max_model_len=4096) as server:
        async with OpenAIChatModel(server.base_url, max_retries=0) as llm:
            graph = compile_graph(
                llm,
                board,
                checkpointer=InMemorySaver(),
                media_roots=[Path(needle_video.path).parent],
            )
            too_big = Context(overview_frames=512)
            chat = await graph.ainvoke(
                {"messages": [HumanMessage(f"{needle_video.path} What colour?")]},
                {"configurable": {"thread_id": "big"}},
                context=too_big,
            )
            result = await run_question(
                graph,
                board,
                video_path=needle_video.path,
                question=Question("What colour?"),
                context=too_big,
            )
            fits = await run_question(
                graph,
                board,
                video_path=needle_video.path,
                question=Question("What colour?"),
                context=SMALL,
            )
    refusal = chat["messages"][-1].content
    assert chat["status"] == "failed"
    for setting in ("overview_frames", "overview_max_pixels", "max_new_tokens", "4,096"):
        assert setting in refusal
    assert result.status == "failed" and result.error == refusal
    assert board.run(result.run_id)["error"] == refusal
    assert fits.status == "answered" and fits.answer == "A"
    mains = [r for r in server.requests if role_of(r) == "main"]
    assert len(mains) == 1  # only the run that fits reached the model


@pytest.mark.slow
@pytest.mark.integration
def test_the_estimates_are_floors_of_what_the_served_model_counts():
    """Send real first turns and windows to the shipped nano on the local server, and compare
    the prompt tokens it counts with the estimates: never above them, and close."""
    from fastapi.testclient import TestClient

    from serving.server import create_app

    info = probe(str(DEMO))
    cases = [(4, 12_288), (16, 50_176), (64, 50_176)]  # overview frames, pixels per frame
    with TestClient(create_app(str(NANO_DIR))) as client:
        for frames, pixels in cases:
            ctx = Context(
                overview_frames=frames,
                overview_max_pixels=pixels,
                crop_max_pixels=pixels,
                crop_max_frames=frames,
            )
            overview = prompts.frames_part(
                str(DEMO), overview_timestamps(info.duration, frames), pixels
            )
            main = main_request(
                Question("What colour is the circle that appears in the video?"),
                overview,
                duration=info.duration,
                setting=Setting(5),
            )
            window = Window(str(DEMO), info.codec, 0.0, float(frames), 0, 0)
            crop = window_frames(window, fps=1.0, max_frames=frames, max_pixels=pixels)
            sub = subagent_request(
                window, crop, question=None, board=[], temperature=0.0, max_tokens=1
            )
            for request, floor in (
                (main, main_prompt_tokens(ctx, info, frames)),
                (sub, window_prompt_tokens(ctx, info, frames)),
            ):
                body = {"messages": request.wire(), "max_tokens": 1}
                counted = client.post("/v1/chat/completions", json=body).json()["usage"]
                assert floor <= counted["prompt_tokens"] <= 1.25 * floor, (request.role, frames)
