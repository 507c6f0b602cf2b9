"""``python -m serving.server --tiny`` on a free port, for the tests that talk to it over HTTP."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

READY_TIMEOUT_S = 120.0


@contextlib.contextmanager
def tiny_server(
    cache_dir: Path, log_path: Path, *, timeout: float = 60.0
) -> Iterator[httpx.Client]:
    """Build the tiny model into ``cache_dir`` and serve it as "tiny"; yields an httpx client
    on its /v1 (``client.log_path`` is the server's log). Fails the test if it never gets
    ready."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "serving.server", "--tiny", "--seed", "0"]
    command += ["--cache-dir", str(cache_dir)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--served-model-name", "tiny"]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}/v1", timeout=timeout)
    client.log_path = log_path
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"server not ready (exit {process.poll()}):\n{log_path.read_text()}")
            time.sleep(0.2)
        assert "ready: serving" in log_path.read_text()
        yield client
    finally:
        client.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
