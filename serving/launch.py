"""Start the local CPU server as a child process and wait until it answers."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

log = logging.getLogger(__name__)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def endpoint_ready(base_url: str, timeout: float = 2.0) -> bool:
    """True when an OpenAI-compatible server answers GET {base_url}/models."""
    try:
        response = httpx.get(base_url.rstrip("/") + "/models", timeout=timeout)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


@contextlib.contextmanager
def local_server(
    model_dir: str | Path | None = None,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    ready_timeout: float = 180.0,
    log_path: str | Path | None = None,
) -> Iterator[str]:
    """Run `python -m serving.server` for the life of the block; yields its base URL."""
    port = port or free_port(host)
    command = [sys.executable, "-m", "serving.server", "--host", host, "--port", str(port)]
    if model_dir is not None:
        command += ["--model", str(model_dir)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    log_file = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
    process = subprocess.Popen(command, env=env, stdout=log_file, stderr=subprocess.STDOUT)
    base_url = f"http://{host}:{port}/v1"
    try:
        deadline = time.monotonic() + ready_timeout
        while not endpoint_ready(base_url, timeout=1.0):
            if process.poll() is not None:
                raise RuntimeError(
                    f"the local model server exited with code {process.returncode} before it "
                    f"was ready; run `{' '.join(command)}` by hand to see why"
                )
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"the local model server at {base_url} was not ready "
                    f"after {ready_timeout:.0f} s"
                )
            time.sleep(0.2)
        log.info("local model server ready at %s", base_url)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log_file is not subprocess.DEVNULL:
            log_file.close()
