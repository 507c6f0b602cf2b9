"""`langgraph dev` on this checkout for the LangGraph server tests (Studio, Agent Chat UI's
path, media admission, PostgreSQL, the canary): the server as a context manager, a scripted
model's replies for it, and one chat turn through its HTTP API."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from serving.launch import free_port
from testing.scripted import Reply, role_of, turn_of
from tests.support.fakes import calls

ROOT = Path(__file__).resolve().parents[2]


def reply(body: dict) -> str | Reply:
    messages = body["messages"]
    if role_of(body) == "sub_agent":
        return "A red triangle with the word CLOUD."
    if role_of(body) == "verifier":
        return "SUPPORTED"
    if "FAIL" in json.dumps(messages[1:2]):
        return Reply("the model server broke", status=500)
    if "HANG" in json.dumps(messages[1:2]):
        return Reply("<think>\nslow</think><answer>A</answer>", delay_s=60)
    if turn_of(body):
        return "<think>\nThe helper saw red.</think><answer>A</answer>"
    return calls((20, 40), (40, 60))[len("<think>") :]


@contextmanager
def langgraph_dev(
    home: Path,
    endpoint: str,
    media: Path,
    api_key: str | None = None,
    *,
    config: str = "langgraph.json",
    extra_env: dict[str, str] | None = None,
):
    """`langgraph dev` on ``config`` with its own home, model endpoint and media root: no
    PARAVT_ setting of the calling shell reaches it, only ``extra_env``."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PARAVT_")},
        **(extra_env or {}),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
        "PARAVT_ENDPOINT": endpoint,
        "PARAVT_HOME": str(home),
        "PARAVT_MEDIA_ROOTS": str(media),
    }
    if api_key is not None:
        env["PARAVT_API_KEY"] = api_key
    langgraph = Path(sys.executable).with_name("langgraph")
    command = [
        str(langgraph),
        "dev",
        "--no-browser",
        "--no-reload",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--config",
        str(ROOT / config),
    ]
    log_path = home / f"studio-{port}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("langgraph dev did not start:\n" + log_path.read_text()[-3000:])
                time.sleep(0.5)
            yield url, process
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)


def ask(client: httpx.Client, thread_id: str, text: str, **extra) -> dict:
    run = client.post(
        f"/threads/{thread_id}/runs/wait",
        json={
            "assistant_id": "paravt",
            "input": {"messages": [{"type": "human", "content": text}]},
            **extra,
        },
    )
    assert run.status_code == 200, run.text
    return run.json()
