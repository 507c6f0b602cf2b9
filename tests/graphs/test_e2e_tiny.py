"""End to end over real HTTP with the real tiny Qwen3-VL model on the CPU.

The model is untrained, so it writes noise: the point is that the graph survives whatever
comes back, records usage, and stores the run, and that the CLI drives it all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.client.completion import ChatModel
from agents.client.llm import OpenAIChatModel
from agents.question import Question
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from graphs.runs.traces import call_role
from serving.launch import local_server
from tests.support.fakes import ScriptedModel, calls

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.integration, pytest.mark.slow]
TINY = Context(
    overview_frames=4,
    max_new_tokens=48,
    summary_max_tokens=24,
    crop_max_frames=4,
    max_turns=1,
    temperature=0.7,
    seed=0,
)


@pytest.fixture(scope="module")
def tiny_endpoint(tmp_path_factory):
    from serving.tiny_model import build_tiny_model

    model_dir = build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)
    with local_server(model_dir, ready_timeout=120) as base_url:
        yield base_url


async def test_the_graph_survives_an_untrained_model(tiny_endpoint, needle_video, board):
    async with OpenAIChatModel(tiny_endpoint, timeout=60) as llm:
        graph = compile_graph(llm, board, checkpointer=InMemorySaver())
        result = await run_question(
            graph,
            board,
            video_path=needle_video.path,
            question=Question("Which colour was the shape?", options=("A. red", "B. green")),
            context=TINY,
        )
    assert result.status in {"answered", "no_answer"}
    trace = result.trace
    main_calls = [c for c in trace["model_calls"] if c["agent"] == "main"]
    assert main_calls and trace["status"] == result.status
    usage = main_calls[0]["completion"]["usage"]
    assert usage["prompt_tokens"] > 0 and usage["image_tokens"] > 0
    assert 0 < usage["completion_tokens"] <= TINY.max_new_tokens
    assert main_calls[0]["frames_encoded"] == 4
    assert len(trace["violations"]) == len(main_calls), "every turn is parsed and judged"
    assert board.run(result.run_id)["status"] == result.status


class MainScriptedSubReal:
    """The main agent from a script, sub-agents from the real model: exercises fan-out."""

    def __init__(self, real: ChatModel):
        self.real = real
        self.script = ScriptedModel(
            main=[calls((0, 20), (20, 40), (40, 60)), "<think>done</think><answer>A</answer>"]
        )

    async def complete(self, request, *, on_text=None):
        if request.role == "sub_agent":
            return await self.real.complete(request)
        return await self.script.complete(request, on_text=on_text)


async def test_real_subagents_summarise_their_windows(tiny_endpoint, needle_video, board):
    async with OpenAIChatModel(tiny_endpoint, timeout=60) as llm:
        graph = compile_graph(MainScriptedSubReal(llm), board, checkpointer=InMemorySaver())
        result = await run_question(
            graph,
            board,
            video_path=needle_video.path,
            question=Question("Which colour?"),
            context=TINY,
        )
    assert result.status == "answered"
    subs = [c for c in result.trace["model_calls"] if call_role(c) == "sub_agent"]
    assert len(subs) == 3
    assert all(c["completion"]["usage"]["image_tokens"] > 0 for c in subs)
    notes = board.notes(result.run_id)
    assert [n.key for n in notes] == ["t0c0", "t0c1", "t0c2"]
    assert all(n.completion_tokens > 0 for n in notes)


def cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "app.py"), "--home", str(home), "--env-file", "", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def test_cli_run_board_and_trace_export(tiny_endpoint, needle_video, tmp_path):
    run = cli(
        "--endpoint",
        tiny_endpoint,
        "run",
        "--video",
        needle_video.path,
        "--question",
        "What word was written?",
        "--overview-frames",
        "4",
        "--max-new-tokens",
        "32",
        "--max-turns",
        "1",
        "--json",
        home=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["status"] in {"answered", "no_answer"} and result["cost"]["model_calls"] >= 1
    board = cli("board", home=tmp_path)
    assert result["run_id"] in board.stdout
    out = tmp_path / "traces.jsonl"
    export = cli("traces", "export", "--out", str(out), home=tmp_path)
    assert export.returncode == 0, export.stderr
    traces = [json.loads(line) for line in out.read_text().splitlines()]
    assert [t["run_id"] for t in traces] == [result["run_id"]]
    assert traces[0]["overview"]["timestamps"] == [7.5, 22.5, 37.5, 52.5]


def test_cli_names_a_missing_video_and_a_dead_endpoint(tmp_path, needle_video):
    missing = cli("run", "--video", str(tmp_path / "nope.mp4"), "--question", "q", home=tmp_path)
    assert missing.returncode == 2 and "nope.mp4" in missing.stderr
    dead = cli(
        "--endpoint",
        "http://127.0.0.1:9/v1",
        "run",
        "--video",
        needle_video.path,
        "--question",
        "q",
        "--overview-frames",
        "2",
        home=tmp_path,
    )
    assert dead.returncode == 1
    assert "connection refused" in dead.stderr and "Is the server running?" in dead.stderr
    # checked before the run starts (issue 40): there is no run to resume, so no resume hint
    assert "--thread-id" not in dead.stderr and "Traceback" not in dead.stderr
