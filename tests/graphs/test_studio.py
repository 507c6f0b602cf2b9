"""`langgraph dev` serves the graph as Agent Chat UI and Studio use it: typed schemas, one
assistant per preset, plain chat messages in and out, streaming, and every run on the board."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from graphs.store.sqlite_board import Board
from testing.scripted import ScriptedServer, role_of
from tests.support.studio import ask, langgraph_dev, reply

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ASSISTANTS = ("paravt", "paravt-qwen3-vl-8b")


@pytest.fixture(scope="module")
def studio(tmp_path_factory, needle_video):
    home = tmp_path_factory.mktemp("studio")
    with ScriptedServer(reply) as model_server:
        media = Path(needle_video.path).parent
        with langgraph_dev(home, model_server.base_url, media) as (url, _):
            yield url, model_server, home


def test_each_preset_is_an_assistant_with_visible_schemas(studio):
    url, _, _ = studio
    with httpx.Client(base_url=url, timeout=60) as client:
        found = {
            a["graph_id"]: a["assistant_id"]
            for a in client.post("/assistants/search", json={}).json()
        }
        assert set(found) >= set(ASSISTANTS)
        defaults = {}
        for assistant in ASSISTANTS:
            schemas = client.get(f"/assistants/{found[assistant]}/schemas").json()
            inputs, outputs = schemas["input_schema"], schemas["output_schema"]
            assert {"messages", "video", "question"} <= set(inputs["properties"])
            assert {"messages", "answer", "status"} <= set(outputs["properties"])
            context = schemas["context_schema"]["properties"]
            defaults[assistant] = (
                context["overview_frames"]["default"],
                context["max_new_tokens"]["default"],
            )
    assert defaults == {"paravt": (4, 256), "paravt-qwen3-vl-8b": (64, 2048)}


def test_a_chat_and_its_follow_up_run_on_the_nano_preset(studio, needle_video):
    url, model_server, home = studio
    video = Path(needle_video.path)
    with httpx.Client(base_url=url, timeout=120) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        first = ask(client, thread, f"{video.name} What colour is the shape?")
        seen = len(model_server.requests)
        second = ask(client, thread, "And is it still there at the end?")
        state = client.get(f"/threads/{thread}/state").json()["values"]
        listed = client.post("/threads/search", json={}).json()
    assert first["status"] == second["status"] == "answered"
    kinds = [(m["type"], bool(m.get("tool_calls"))) for m in state["messages"]]
    assert (
        kinds
        == [("human", False), ("ai", True), ("tool", False), ("tool", False), ("ai", False)] * 2
    )
    assert [m["content"] for m in state["messages"] if m["type"] == "ai"][1] == "A"
    first_main = next(b for b in model_server.requests if role_of(b) == "main")
    images = sum(
        p.get("type") == "image_url"
        for m in first_main["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
    )
    assert images == 4 and first_main["max_tokens"] == 256  # the nano preset, not 64 frames
    follow_up = next(b for b in model_server.requests[seen:] if role_of(b) == "main")
    assert "And is it still there" in json.dumps(follow_up["messages"][1])
    assert "What colour" not in json.dumps(follow_up["messages"])
    runs = Board(home / "board.sqlite").runs()
    assert [r["status"] for r in runs if r["thread_id"] == thread] == ["answered", "answered"]
    preview = next(t for t in listed if t["thread_id"] == thread)
    assert preview["values"]["messages"][0]["content"].endswith("What colour is the shape?")


@pytest.mark.parametrize("board_mode", ["isolated", "verified"])
def test_stream_modes_carry_tokens_notes_and_progress(studio, needle_video, board_mode):
    url, _, _ = studio
    events = []
    body = {
        "assistant_id": "paravt",
        "input": {"messages": [{"type": "human", "content": f"{needle_video.path} Colour?"}]},
        "context": {"board_mode": board_mode},
        "stream_mode": ["messages-tuple", "updates", "custom"],
    }
    with httpx.Client(base_url=url, timeout=120) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        with client.stream("POST", f"/threads/{thread}/runs/stream", json=body) as stream:
            event = None
            for line in stream.iter_lines():
                if line.startswith("event: "):
                    event = line[len("event: ") :]
                elif line.startswith("data: ") and event:
                    events.append((event, json.loads(line[len("data: ") :])))
    updates = {
        node: value for kind, data in events if kind == "updates" for node, value in data.items()
    }
    assert {"prepare", "main_agent", "sub_agent", "collect", "finish"} <= set(updates)
    assert all(updates[node] for node in ("sub_agent", "collect"))
    # the note comes from the sub-agent, or from the verify gate with its verdict; a gate
    # that is off is routed around (as the length gate is here)
    poster = "verify_gate" if board_mode == "verified" else "sub_agent"
    assert ("verify_gate" in updates) == (board_mode == "verified")
    assert "length_gate" not in updates
    notes = updates[poster]["tool_results"]
    assert notes and all(r["content"].startswith("A red triangle") for r in notes)
    assert {r["verdict"] for r in notes} == ({"SUPPORTED"} if board_mode == "verified" else {None})
    progress_notes = [data for kind, data in events if kind == "custom" and data["event"] == "note"]
    assert len(progress_notes) == 2  # one per window, whoever posted it
    chunks = [data[0] for kind, data in events if kind == "messages"]
    tokens = [c for c in chunks if c["type"] == "AIMessageChunk"]
    assert tokens and {t["id"] for t in tokens} <= {m["id"] for m in _ai_messages(events)}
    streamed = "".join(t["content"] for t in tokens)
    assert "The helper saw red." in streamed and "<" not in streamed  # words, never markup
    progress = [data["event"] for kind, data in events if kind == "custom"]
    assert "overview" in progress and "calls" in progress


def _ai_messages(events):
    finals = [data for kind, data in events if kind == "updates"]
    return [
        m
        for update in finals
        for value in update.values()
        if isinstance(value, dict)
        for m in value.get("messages", [])
        if m.get("type") == "ai"
    ]


def test_a_run_failing_in_the_server_is_failed_on_the_board(studio, needle_video):
    url, _, home = studio
    with httpx.Client(base_url=url, timeout=120) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        client.post(
            f"/threads/{thread}/runs/wait",
            json={
                "assistant_id": "paravt",
                "input": {
                    "messages": [{"type": "human", "content": f"{needle_video.path} FAIL please"}]
                },
            },
        )
        again = ask(client, thread, "Then what colour is it?")
    (failed, answered) = sorted(
        (r for r in Board(home / "board.sqlite").runs() if r["thread_id"] == thread),
        key=lambda r: r["started_at"],
    )
    assert failed["status"] == "failed" and "500" in failed["error"]
    assert answered["status"] == again["status"] == "answered"  # the thread goes on


def test_a_run_left_by_a_killed_server_is_interrupted_when_the_board_opens(tmp_path, needle_video):
    with ScriptedServer(reply) as model_server:
        media = Path(needle_video.path).parent
        with langgraph_dev(tmp_path, model_server.base_url, media) as (url, process):
            with httpx.Client(base_url=url, timeout=60) as client:
                thread = client.post("/threads", json={}).json()["thread_id"]
                client.post(
                    f"/threads/{thread}/runs",
                    json={
                        "assistant_id": "paravt",
                        "input": {
                            "messages": [{"type": "human", "content": f"{needle_video.path} HANG"}]
                        },
                    },
                )
                deadline = time.monotonic() + 60
                while not any(role_of(b) == "main" for b in model_server.requests):
                    assert time.monotonic() < deadline, "the run never reached the model"
                    time.sleep(0.2)
            assert Board(tmp_path / "board.sqlite", mark_stale=False).runs()[0]["status"] == (
                "running"
            )
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    (run,) = Board(tmp_path / "board.sqlite").runs()
    assert run["status"] == "interrupted"
