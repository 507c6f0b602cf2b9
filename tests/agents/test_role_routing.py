"""Every consumer routes on the request's role, never on prompt text: with every template
reworded, the oracle writes the same turns, the scripted server and the fakes see the same
roles, and nothing lands in the wrong place (the trajectory masks:
tests/training/test_rollout.py)."""

from __future__ import annotations

import json

import pytest

from agents import benchmark
from agents.question import Question
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from tests.support.fakes import ScriptedModel, calls
from tests.support.rewording import PREFIX, reword_templates
from training.nano.data import Job, run_oracle

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def needle_jobs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("needle")
    video, items = benchmark.generate(folder, benchmark.SPLIT_SEEDS["test"])
    kinds = {item.id.rsplit("-", 1)[-1]: item for item in items}
    return [Job(video, kinds[kind], 0.0, "parallel") for kind in ("shape", "ground")]


async def oracle_turns(jobs, out, monkeypatch=None):
    if monkeypatch is not None:
        reword_templates(monkeypatch)
    traces = await run_oracle(jobs, out, concurrency=1)
    return [
        [(c["role"], c["completion"]["text"]) for c in trace["model_calls"]] for trace in traces
    ], traces


async def test_the_oracle_writes_the_same_turns_whatever_the_prompts_say(
    needle_jobs, tmp_path, monkeypatch
):
    plain, _ = await oracle_turns(needle_jobs, tmp_path / "plain")
    reworded, traces = await oracle_turns(needle_jobs, tmp_path / "reworded", monkeypatch)
    assert reworded == plain and all(len(turns) == 6 for turns in plain)  # 2 main + 4 notes
    for trace in traces:
        first, note = trace["model_calls"][0], trace["model_calls"][1]
        assert json.dumps(first["messages"][0]).count(PREFIX) == 1  # the rewording took effect
        assert PREFIX in json.dumps(note["messages"])
        assert trace["status"] == "answered"


async def test_roles_reach_a_fake_unchanged_when_every_template_is_reworded(
    needle_video, board, monkeypatch
):
    def run_roles():
        model = ScriptedModel(main=[calls((0, 10), (10, 20)), "<think>x</think><answer>A</answer>"])
        graph = compile_graph(model, board)
        return model, graph

    context = Context(
        overview_frames=2,
        overview_max_pixels=4096,
        crop_max_frames=2,
        crop_max_pixels=4096,
        board_mode="verified",
    )
    seen = []
    for reworded in (False, True):
        if reworded:
            reword_templates(monkeypatch)
        model, graph = run_roles()
        result = await run_question(
            graph,
            board,
            video_path=needle_video.path,
            question=Question("Which colour?"),
            context=context,
        )
        assert result.answer == "A"
        seen.append(sorted((r.request.role, r.request.agent) for r in model.requests))
        texts = [json.dumps(r.messages) for r in model.requests]
        assert all((PREFIX in t) is reworded for t in texts)
    assert seen[0] == seen[1] and {role for role, _ in seen[0]} == {"main", "sub_agent", "verifier"}
