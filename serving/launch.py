"""Start a model server as a child process, wait until it answers, and stop it."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx

from serving.checkpoints import NANO_DIR, default_checkpoint

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


def server_command(
    model_dir: str | Path | None = None, *, host: str = "127.0.0.1", port: int = 30000
) -> list[str]:
    """The `python -m serving.server` command line for `model_dir` (default: paravt-nano,
    or the untrained tiny model, with a warning, when the nano checkpoint is missing)."""
    if model_dir is None:
        model_dir = default_checkpoint()
        if model_dir is None:
            log.warning(
                "the paravt-nano checkpoint is missing from %s: the local server will run the "
                "untrained tiny model instead",
                NANO_DIR,
            )
    command = [sys.executable, "-m", "serving.server", "--host", host, "--port", str(port)]
    return [*command, "--model", str(model_dir)] if model_dir is not None else command


def wait_until_ready(
    process: subprocess.Popen, base_url: str, *, timeout: float, command: Sequence[str]
) -> None:
    """Poll `base_url` until it answers; raise if `process` exits first or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while not endpoint_ready(base_url, timeout=1.0):
        if process.poll() is not None:
            raise RuntimeError(
                f"the model server exited with code {process.returncode} before it was "
                f"ready; run `{' '.join(command)}` by hand to see why"
            )
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server at {base_url} was not ready after {timeout:.0f} s")
        time.sleep(0.2)


def stop(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Terminate `process`, and kill it if it has not exited after `grace_s`."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def local_server(
    model_dir: str | Path | None = None,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    ready_timeout: float = 180.0,
    log_path: str | Path | None = None,
) -> Iterator[str]:
    """Run `python -m serving.server` for the life of the block; yields its base URL.

    `model_dir` defaults to the shipped paravt-nano checkpoint (see `server_command`).
    """
    port = port or free_port(host)
    command = server_command(model_dir, host=host, port=port)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    log_file = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
    process = subprocess.Popen(command, env=env, stdout=log_file, stderr=subprocess.STDOUT)
    base_url = f"http://{host}:{port}/v1"
    try:
        wait_until_ready(process, base_url, timeout=ready_timeout, command=command)
        log.info("local model server ready at %s", base_url)
        yield base_url
    finally:
        stop(process)
        if log_file is not subprocess.DEVNULL:
            log_file.close()


def serve_foreground(
    command: Sequence[str],
    base_url: str,
    *,
    ready_timeout: float,
    on_ready: Callable[[str], None],
    env: dict[str, str] | None = None,
) -> int:
    """Run a server command with the terminal's output until it exits, or Ctrl-C or SIGTERM
    stops it (and the server with it); call `on_ready(base_url)` once it answers. Returns the
    server's exit code (0 when stopped). Call it from the main thread (it sets a handler)."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    process = subprocess.Popen(list(command), env=env)
    try:
        wait_until_ready(process, base_url, timeout=ready_timeout, command=command)
        on_ready(base_url)
        return process.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop(process)
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt
