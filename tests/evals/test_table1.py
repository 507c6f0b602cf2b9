"""`app.py eval table1`: a Table 1 row over the release's seven splits, on fixture data in the
published layouts, against a real HTTP server; the summary is the release's."""

from __future__ import annotations

import json

import pytest

from agents.client.llm import OpenAIChatModel
from evals.table1 import ROWS, SPLITS, run_row, split_context
from graphs.context import Context
from graphs.regime import protocol_refusal
from testing.scripted import ScriptedServer
from tests.parity import release_episodes as E

CALLS = (
    "<think>\nlook\n</think>\n<tool_call>\n"
    '{"name": "crop_video", "arguments": {"start_time": 1, "end_time": 3}}\n</tool_call>\n'
    '<tool_call>\n{"name": "crop_video", "arguments": {"start_time": 4, "end_time": 6}}\n'
    "</tool_call>"
)


def answer(request: dict) -> str:
    """Two calls on the first turn, then B (or an interval, for Charades)."""
    if request["_caller"]["turn"] == "0":
        return CALLS
    return (
        "The event happens in the 2.1 - 6.4 seconds."
        if "sentence" in str(request["messages"][1])
        else "<answer>B</answer>"
    )


@pytest.mark.slow
async def test_a_row_runs_every_split_and_writes_the_release_summary(tmp_path):
    root = E.fixture_data_root(tmp_path / "data")
    with ScriptedServer(answer) as server:
        async with OpenAIChatModel(server.base_url, model="scripted", max_retries=0) as llm:
            result = await run_row(
                "paravt-8b",
                data_root=root,
                llm=llm,
                model="scripted",
                out_root=tmp_path / "runs",
                concurrency=1,
            )
    splits = {s["dataset"]: s for s in result["splits"]}
    assert list(splits) == [name for name, *_ in SPLITS]
    golds = {
        "videomme": "B",
        "videomme_wsub": "B",
        "longvideobench": "C",
        "lvbench": "A",
        "mlvu": "D",
        "mmvu": "E",
    }
    for name, gold in golds.items():
        assert splits[name]["accuracy"] == (1.0 if gold == "B" else 0.0), name
        assert (splits[name]["avg_tool_calls"], splits[name]["tool_usage_rate"]) == (2.0, 1.0)
    charades = splits["charades"]
    assert charades["mIoU"] == pytest.approx(1.0) and charades["R@0.7"] == 1.0
    assert charades["settings"]["prompt_mode"] == "agentic_minimal"
    assert charades["settings"]["video_channel"] == "video_url"
    saved = json.loads((tmp_path / "runs/paravt-8b/summary.json").read_text())
    assert saved == json.loads(json.dumps(result))
    table = (tmp_path / "runs/paravt-8b/summary.md").read_text()
    assert "| videomme_wsub | accuracy | 100.0 | 69.4 |" in table  # ours beside the paper's
    assert "| charades | mIoU | 100.0 | 50.1 | 100.0 | 100.0 | 100.0 |" in table


def test_each_row_runs_its_splits_with_the_release_settings():
    assert split_context(ROWS["paravt-8b"], "charades").prompt_mode == "agentic_minimal"
    assert split_context(ROWS["qwen2.5-vl-7b"], "mlvu").prompt_mode == "direct"
    assert split_context(ROWS["video-r1-7b"], "charades").video_channel == "video_url"
    assert split_context(ROWS["conan-7b"], "lvbench").max_turns == 3
    assert split_context(ROWS["time-r1-7b"], "lvbench").max_turns == 1
    assert len(ROWS) == 10  # ParaVT-8B, Qwen3-VL-8B, Qwen2.5-VL-7B, Conan-7B, six reasoning


def test_a_video_url_for_a_server_that_takes_frames_is_refused_before_anything_runs():
    context = Context(protocol="release-eval", video_channel="video_url")
    message = protocol_refusal(context, set(), {"protocol": "paravt", "video_input": False})
    assert "--video-channel video_url" in message and "image_url" in message
    assert protocol_refusal(context, set(), None) is None  # a server that says nothing
    pinned = protocol_refusal(Context(protocol="release-eval", crop_fps=2.0), {"crop_fps"}, None)
    assert "--crop-fps 2.0 (release-eval fixes 1.0)" in pinned
