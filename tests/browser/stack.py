"""The real servers the browser test drives: paravt-nano, `langgraph dev`, the built chat UI.

Each runs on a free loopback port for the life of a `with` block; the two child processes log
to files under the test's folder, and a start that fails says why with the tail of its log.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

from serving.launch import free_port

ROOT = Path(__file__).resolve().parents[2]
# `langgraph dev` offline: no analytics, no version check, no LangSmith tracing upload.
OFFLINE = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
}


@dataclass
class Stack:
    model_url: str  # the nano server's OpenAI-compatible /v1 URL
    api_url: str  # `langgraph dev`
    ui_url: str  # the built Agent Chat UI
    logs: dict[str, Path]

    def chat_url(self, assistant_id: str = "paravt") -> str:
        return f"{self.ui_url}/?apiUrl={self.api_url}&assistantId={assistant_id}"

    def log_tails(self, chars: int = 3000) -> str:
        return "\n".join(
            f"--- {name} log ({path}) ---\n{tail(path, chars)}" for name, path in self.logs.items()
        )


def tail(path: Path, chars: int) -> str:
    """The end of a log, without its terminal colours."""
    if not path.exists():
        return "(no log)"
    return re.sub(r"\x1b\[[0-9;]*m", "", path.read_text(errors="replace"))[-chars:]


@contextlib.contextmanager
def child(name: str, command: list[str], *, log: Path, env: dict[str, str]) -> Iterator:
    """Run `command` from the repo root, logging to `log`; stop it (and its group) on exit."""
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                process.wait()


def wait_ready(name: str, process: subprocess.Popen, url: str, log: Path, timeout: float):
    """Poll `url` until it answers 200; raise with the log's tail if the process dies first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            state = (
                f"exited with {process.returncode}"
                if process.poll() is not None
                else (f"not answering {url} after {timeout:.0f} s")
            )
            raise RuntimeError(f"{name} did not start ({state}):\n{tail(log, 3000)}")
        time.sleep(0.5)


@contextlib.contextmanager
def static_site(folder: Path) -> Iterator[str]:
    """Serve a built single-page app from `folder` on a free port; yields its URL."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def running_stack(
    ui_dist: Path, workdir: Path, *, config: Path = ROOT / "langgraph.json", ready_timeout=240.0
) -> Iterator[Stack]:
    """paravt-nano (`app.py serve`), `langgraph dev` serving `config` on it, and the UI, all on
    127.0.0.1; `langgraph dev` runs from the repo root, a media root of the graph."""
    model_port, api_port = free_port(), free_port()
    model_url = f"http://127.0.0.1:{model_port}/v1"
    api_url = f"http://127.0.0.1:{api_port}"
    logs = {"nano server": workdir / "nano-server.log", "langgraph dev": workdir / "langgraph.log"}
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    nano = [sys.executable, "app.py", "--env-file", "", "serve", "--port", str(model_port)]
    langgraph = [
        str(Path(sys.executable).with_name("langgraph")),
        "dev",
        "--no-browser",
        "--no-reload",
        "--host",
        "127.0.0.1",
        "--port",
        str(api_port),
        "--config",
        str(config),
    ]
    graph_env = {
        **env,
        **OFFLINE,
        "PARAVT_ENDPOINT": model_url,
        "PARAVT_HOME": str(workdir / "home"),
    }
    with (
        child("nano server", nano, log=logs["nano server"], env=env) as model,
        child("langgraph dev", langgraph, log=logs["langgraph dev"], env=graph_env) as api,
        static_site(ui_dist) as ui_url,
    ):
        # Both start at once; the graph only calls the model when a run starts.
        wait_ready(
            "the nano server", model, f"{model_url}/models", logs["nano server"], ready_timeout
        )
        wait_ready("langgraph dev", api, f"{api_url}/ok", logs["langgraph dev"], ready_timeout)
        yield Stack(model_url, api_url, ui_url, logs)
