"""Process settings precedence, and the trace JSONL contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphs.context import Context
from graphs.runs.traces import TRACE_VERSION, build_trace, read_jsonl, total_cost, write_jsonl
from graphs.settings import DEFAULT_ENDPOINT, Settings


def test_settings_precedence_defaults_env_file_environment_flags(tmp_path, monkeypatch):
    monkeypatch.delenv("PARAVT_ENDPOINT", raising=False)
    monkeypatch.delenv("PARAVT_MODEL", raising=False)
    assert Settings.load(env_file=None).endpoint == DEFAULT_ENDPOINT
    env = tmp_path / ".env"
    env.write_text("PARAVT_ENDPOINT=http://127.0.0.1:1111/v1\nPARAVT_MODEL=from-file\n")
    assert Settings.load(env_file=env).endpoint == "http://127.0.0.1:1111/v1"
    monkeypatch.setenv("PARAVT_ENDPOINT", "http://127.0.0.1:2222/v1")
    settings = Settings.load(env_file=env)
    assert settings.endpoint == "http://127.0.0.1:2222/v1" and settings.model == "from-file"
    explicit = Settings.load(env_file=env, endpoint="http://127.0.0.1:3333/v1", model=None)
    assert explicit.endpoint == "http://127.0.0.1:3333/v1", "a flag must beat the environment"
    monkeypatch.setenv("PARAVT_HOME", str(tmp_path / "h"))
    assert Settings.load(env_file=None).board_path == tmp_path / "h" / "board.sqlite"


def test_context_rejects_out_of_range_settings():
    with pytest.raises(ValueError, match="max_parallel=0"):
        Context(max_parallel=0)
    assert Context(dispatch="sequential", max_parallel=5).calls_per_turn == 1
    assert Context(dispatch="none").calls_per_turn == 0


def completion(prompt, out, image=None, latency=0.5):
    return {
        "completion": {
            "usage": {"prompt_tokens": prompt, "completion_tokens": out, "image_tokens": image},
            "latency_s": latency,
        },
        "frames_encoded": 4,
    }


def test_cost_counts_every_call_and_every_encoded_frame():
    cost = total_cost([completion(100, 10, 40), completion(50, 5)], tool_calls=3)
    assert cost == {
        "model_calls": 2,
        "prompt_tokens": 150,
        "completion_tokens": 15,
        "image_tokens": 40,
        "frames_encoded": 8,
        "tool_calls": 3,
        "latency_s": 1.0,
    }
    assert total_cost([completion(1, 1)], tool_calls=0)["image_tokens"] is None


def test_traces_round_trip_through_jsonl_and_reject_other_versions(tmp_path: Path):
    values = {
        "run_id": "r1",
        "question": "q",
        "status": "answered",
        "answer": "A",
        "model_calls": [completion(10, 2)],
        "calls": [],
        "turn": 0,
    }
    trace = build_trace(values, Context(), thread_id="t1")
    assert trace["trace_version"] == TRACE_VERSION and trace["settings"]["max_turns"] == 3
    path = tmp_path / "out" / "traces.jsonl"
    assert write_jsonl([trace, trace], path) == 2
    assert [t["run_id"] for t in read_jsonl(path)] == ["r1", "r1"]
    path.write_text(json.dumps({**trace, "trace_version": 0}) + "\n")
    with pytest.raises(ValueError, match="trace_version 0"):
        list(read_jsonl(path))
    path.write_text("{not json\n")
    with pytest.raises(ValueError, match=r"traces\.jsonl:1"):
        list(read_jsonl(path))


def test_a_failed_trace_says_so():
    trace = build_trace({"run_id": "r"}, Context(), thread_id="t", error="endpoint down")
    assert trace["status"] == "failed" and trace["error"] == "endpoint down"
