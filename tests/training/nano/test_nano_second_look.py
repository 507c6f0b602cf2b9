"""Sub-agent rows at a second look (training.nano.second_look) against the graph's own second
look: the verify gate, run with the oracle and ``verify_rereads=1``, sends the request these
rows train on."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest

from agents import benchmark
from graphs.builder import compile_graph
from graphs.runs.run import run_question
from graphs.runs.traces import call_role
from graphs.store.sqlite_board import Board
from training.nano import data
from training.nano.oracle import OracleModel, bind, frame_times, window_note
from training.nano.second_look import second_look_rows
from training.sft_data import chat_row


@pytest.fixture(scope="module")
def gate_traces(tmp_path_factory):
    """Verified-board runs of one video whose oracle misreads often, so the gate looks again."""
    root = tmp_path_factory.mktemp("second-look")
    video, items = benchmark.generate(root / "v", 3, minutes=(1, 2))
    board = Board(root / "board.sqlite")
    graph = compile_graph(OracleModel(noise=0.6), board)
    context = data.benchmark_context(board_mode="verified", verify_rereads=1)

    async def run_all():
        traces = []
        for k, item in enumerate(items):
            bind(video, item)
            question = replace(item.ask, prompt=benchmark.prompt_text(item))
            result = await run_question(
                graph,
                board,
                video_path=video.path,
                question=question,
                context=context,
                run_id=f"look-{k}",
            )
            traces.append(result.trace)
        return traces

    return video, asyncio.run(run_all())


def _looks(trace) -> dict[str, list[dict]]:
    """Each sub-agent's calls in a trace, in order: its first look, then any second one."""
    looks: dict[str, list[dict]] = {}
    for call in trace["model_calls"]:
        if call_role(call) == "sub_agent":
            looks.setdefault(call["agent"], []).append(call)
    return looks


def _first_looks_only(trace) -> dict:
    seen, calls = set(), []
    for call in trace["model_calls"]:
        if call_role(call) == "sub_agent" and call["agent"] in seen:
            continue
        seen.add(call["agent"])
        calls.append(call)
    return {**trace, "model_calls": calls}


def test_a_second_look_row_asks_what_the_gates_second_look_asks(gate_traces):
    video, traces = gate_traces
    compared = 0
    for trace in traces:
        rows = {r["agent"]: r for r in second_look_rows(_first_looks_only(trace), video, share=1)}
        for agent, calls in _looks(trace).items():
            if len(calls) < 2:
                continue
            again = calls[1]
            sent = chat_row([*again["messages"], {"role": "assistant", "content": "-"}])
            row = rows[agent]
            assert row["messages"][:-1] == sent["messages"][:-1], "the same text and labels"
            assert [i["bytes"] for i in row["images"]] == [i["bytes"] for i in sent["images"]]
            compared += 1
    assert compared >= 2, "the gate looked again at too few windows to compare"


def test_a_second_look_rows_note_states_what_its_own_frames_show(gate_traces):
    video, traces = gate_traces
    rows = [r for t in traces for r in second_look_rows(t, video, share=1)]
    spans = {
        (t["run_id"], f"sub:{n['turn']}:{n['index']}"): n["end"] for t in traces for n in t["notes"]
    }
    firsts = {
        (t["run_id"], a): frame_times(c[0]["messages"][-1])
        for t in traces
        for a, c in _looks(t).items()
    }
    for row in rows:
        times = frame_times(row["messages"][-2])
        assert times != firsts[row["run_id"], row["agent"]] and row["look"] == 2
        end = spans[row["run_id"], row["agent"]]
        assert row["messages"][-1]["content"][0]["text"] == window_note(video, times, end)
    notes = [r["messages"][-1]["content"][0]["text"] for r in rows]
    assert any(n.startswith("Seen:") for n in notes), "some second look sees a needle"


def test_the_share_draws_calls_by_run_and_skips_misread_notes(gate_traces):
    video, traces = gate_traces
    trace = _first_looks_only(traces[0])
    agents = list(_looks(trace))
    assert second_look_rows(trace, video, share=0) == []
    everyone = second_look_rows(trace, video, share=1)
    assert [r["agent"] for r in everyone] == agents
    skipped = second_look_rows(trace, video, share=1, misread={agents[0]})
    assert [r["agent"] for r in skipped] == agents[1:]
    calls, drawn, again = set(), set(), set()
    for each in map(_first_looks_only, traces):
        calls |= {(each["run_id"], agent) for agent in _looks(each)}
        for draws in (drawn, again):
            draws |= {
                (each["run_id"], r["agent"]) for r in second_look_rows(each, video, share=0.5)
            }
    assert set() < drawn < calls, "a half share draws some calls, not all"
    assert again == drawn, "the same draws every time"


def test_sft_rows_with_second_looks_keep_every_first_look_row_and_check_the_new_ones(
    gate_traces, tmp_path
):
    _, traces = gate_traces
    path = tmp_path / "traces.jsonl"
    firsts = [_first_looks_only(t) for t in traces]
    path.write_text("".join(json.dumps({**t, "noise": 0.0, "misread": []}) + "\n" for t in firsts))
    before = data.sft_rows(path)
    after = data.sft_rows(path, second_looks=1.0)
    key = lambda r: (r["run_id"], r["agent"], json.dumps(r["messages"]))  # noqa: E731
    assert {key(r) for r in before} < {key(r) for r in after}
    added = [r for r in after if key(r) not in {key(b) for b in before}]
    subs = [r for r in added if r["role"] == "sub_agent"]
    checks = [r for r in added if r["role"] == "verifier"]
    assert subs and all(r["look"] == 2 for r in subs)
    assert len(checks) >= len(subs), "every second look's window gets at least its right note"
