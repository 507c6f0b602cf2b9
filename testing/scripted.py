"""A real OpenAI-compatible HTTP server that answers chat requests with scripted replies.

Used by tests and benchmarks wherever a model endpoint is needed but a model is not: fan-out
timing (each request sleeps its latency in its own handler thread, so concurrent requests
overlap), retries and failures (status codes, delays, garbage bodies, streams cut short), and
zero-latency orchestration benchmarks. A ``stream: true`` request gets its reply as SSE
chunks, word by word (`serving.sse`). Standard library only.

    with ScriptedServer(["first reply", "second reply"], latency_s=0.2) as server:
        client = OpenAIChatModel(server.base_url)
        ...
        server.requests  # every chat request body received, in arrival order

Run it in the foreground for benchmarks:

    python -m testing.scripted --port 30001 --latency 0.2 --reply "<answer>A</answer>"
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from serving.launch import free_port, stop, wait_until_ready
from testing.scripted_http import CALLER, _HTTPServer
from testing.scripted_replies import Reply, Responder, as_responder

log = logging.getLogger(__name__)

__all__ = ["CALLER", "Reply", "Responder", "ScriptedServer", "main", "role_of", "turn_of"]


def role_of(request: dict[str, Any]) -> str | None:
    """The role the client declared for a recorded request ("main", "sub_agent", ...)."""
    return (request.get(CALLER) or {}).get("role")


def turn_of(request: dict[str, Any]) -> int | None:
    """The main-agent turn the client declared for a recorded request (0: the first, before
    any tool response), or None when it sent none."""
    turn = (request.get(CALLER) or {}).get("turn")
    return int(turn) if turn not in (None, "") else None


class ScriptedServer:
    """OpenAI-compatible chat server with scripted replies, on a daemon thread.

    `responder` is a callable (request body -> text or Reply), a sequence consumed in order
    (the last item then repeats), or one string that answers every request. With `api_key`,
    a request without ``Authorization: Bearer <api_key>`` gets a 401; `model_fields` add to
    the model's GET /v1/models entry (a ``regime``, say).
    """

    def __init__(
        self,
        responder: Responder | Sequence[str | Reply] | str = "",
        *,
        latency_s: float = 0.0,
        model: str = "scripted",
        host: str = "127.0.0.1",
        port: int = 0,
        max_model_len: int | None = None,
        api_key: str | None = None,
        slots: int | None = None,
        model_fields: dict[str, Any] | None = None,
    ) -> None:
        """``slots``: at most that many requests are answered at once, the rest wait their
        turn, as a GPU server's batch is full (None: no limit)."""
        self._responder = as_responder(responder)
        self.latency_s = latency_s
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        self.model = model
        self.max_model_len = max_model_len  # listed at /v1/models, as SGLang and vLLM list it
        self.api_key, self.model_fields = api_key, dict(model_fields or {})
        self.authorizations: list[str | None] = []  # each request's Authorization, in order
        self.host = host
        self.port = port
        self.requests: list[dict[str, Any]] = []
        self._requests_lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, e.g. http://127.0.0.1:54321/v1 (port known after start)."""
        return f"http://{self.host}:{self.port}/v1"

    def _record(self, request: dict[str, Any]) -> None:
        with self._requests_lock:
            self.requests.append(request)

    def start(self) -> ScriptedServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _HTTPServer((self.host, self.port), self)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"scripted-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()  # wake handlers sleeping out their latency
        self._httpd.shutdown()
        self._httpd.close_connections()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def serve_forever(self) -> None:
        """Start and block until interrupted (the CLI's foreground mode)."""
        self.start()
        try:
            while self._thread is not None and self._thread.is_alive():
                self._thread.join(timeout=0.5)
        finally:
            self.stop()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m testing.scripted",
        description="OpenAI-compatible server answering every chat request with a fixed reply.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind")
    parser.add_argument("--port", type=int, default=30001, help="port (0 picks a free one)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds slept per request")
    parser.add_argument("--reply", default="<answer>A</answer>", help="completion text")
    parser.add_argument(
        "--responder",
        metavar="MODULE:FUNCTION",
        help="a function of the request body returning the reply (overrides --reply)",
    )
    parser.add_argument("--model", default="scripted", help="model id served at /v1/models")
    parser.add_argument("--slots", type=int, help="most requests answered at once (no limit)")
    args = parser.parse_args(argv)
    script: Responder | str = args.reply
    if args.responder:
        module, _, name = args.responder.partition(":")
        script = getattr(importlib.import_module(module), name)
    server = ScriptedServer(
        script,
        latency_s=args.latency,
        model=args.model,
        host=args.host,
        port=args.port,
        slots=args.slots,
    )
    server.start()
    print(f"scripted server at {server.base_url} (latency {args.latency}s)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


@contextlib.contextmanager
def scripted_process(
    *args: str, cwd: str | Path | None = None, ready_timeout: float = 30.0
) -> Iterator[str]:
    """`python -m testing.scripted` in its own process for the life of the block (a bench's
    endpoint, whose own work must not count against the client's); yields its base URL.
    ``args`` add to its command line (``--responder``, ``--latency``)."""
    port = free_port()
    command = [sys.executable, "-m", "testing.scripted", "--port", str(port), *args]
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_ready(process, base_url, timeout=ready_timeout, command=command)
        yield base_url
    finally:
        stop(process)


if __name__ == "__main__":
    main()
