"""`langgraph dev` starts offline on a free loopback port and runs a thread over its HTTP API."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from serving.launch import free_port
from serving.scripted import ScriptedServer
from tests.fakes import calls

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.integration, pytest.mark.slow]


def reply(body: dict) -> str:
    messages = body["messages"]
    if "describe video clips" in str(messages[0]["content"]):
        return "A red triangle with the word CLOUD."
    if "<tool_response>" in str(messages[-2:]):
        return "<think>\nThe helper saw red.</think><answer>A</answer>"
    return calls((20, 40), (40, 60))[len("<think>") :]


@pytest.fixture
def studio(tmp_path, needle_video):
    with ScriptedServer(reply) as model_server:
        port = free_port()
        env = {
            **os.environ,
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGGRAPH_NO_VERSION_CHECK": "true",
            "LANGSMITH_TRACING": "false",
            "PARAVT_ENDPOINT": model_server.base_url,
            "PARAVT_HOME": str(tmp_path),
        }
        langgraph = Path(sys.executable).with_name("langgraph")
        log = open(tmp_path / "studio.log", "wb")  # noqa: SIM115
        process = subprocess.Popen(
            [
                str(langgraph),
                "dev",
                "--no-browser",
                "--no-reload",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--config",
                str(ROOT / "langgraph.json"),
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        "langgraph dev did not start:\n"
                        + (tmp_path / "studio.log").read_text()[-3000:]
                    )
                time.sleep(0.5)
            yield url, model_server, tmp_path
        finally:
            process.terminate()
            process.wait(timeout=20)
            log.close()


def test_langgraph_dev_runs_a_thread_over_http(studio, needle_video):
    url, model_server, home = studio
    with httpx.Client(base_url=url, timeout=60) as client:
        assistants = client.post("/assistants/search", json={}).json()
        assert any(a["graph_id"] == "paravt" for a in assistants)
        thread = client.post("/threads", json={}).json()
        run = client.post(
            f"/threads/{thread['thread_id']}/runs/wait",
            json={
                "assistant_id": "paravt",
                "input": {
                    "video": needle_video.path,
                    "question": "Which colour?",
                    "options": ["A. red", "B. blue"],
                },
                "context": {"overview_frames": 4, "crop_max_frames": 4},
            },
        )
        assert run.status_code == 200, run.text
        out = run.json()
    assert out["status"] == "answered" and out["answer"] == "A"
    sub_requests = [
        b
        for b in model_server.requests
        if "describe video clips" in str(b["messages"][0]["content"])
    ]
    assert len(sub_requests) == 2
    assert (home / "board.sqlite").exists()
