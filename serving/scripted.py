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

    python -m serving.scripted --port 30001 --latency 0.2 --reply "<answer>A</answer>"
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import socket
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from serving.scripted_replies import Reply, Responder, as_responder, completion_body, error_body
from serving.sse import CONTENT_TYPE, DONE, ChunkStream, wants_usage, words

log = logging.getLogger(__name__)

__all__ = ["CALLER", "Reply", "Responder", "ScriptedServer", "main", "role_of"]

CALLER = "_caller"
"""Key under which each recorded request holds its caller's role, turn and call."""


def role_of(request: dict[str, Any]) -> str | None:
    """The role the client declared for a recorded request ("main", "sub_agent", ...)."""
    return (request.get(CALLER) or {}).get("role")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like a real server behind a pooled client
    disable_nagle_algorithm = True  # headers and body go out in separate writes
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:  # silence per-request logging
        return

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        scripted = self.server.scripted
        if path in ("/health", "/v1/health"):
            self._send_json(200, {"status": "ok"})
        elif path == "/v1/models":
            model = {"id": scripted.model, "object": "model", "created": 0, "owned_by": "scripted"}
            if scripted.max_model_len is not None:
                model["max_model_len"] = scripted.max_model_len
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_json(404, error_body(404, f"no route GET {path}"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path != "/v1/chat/completions":
            self._send_json(404, error_body(404, f"no route POST {path}"))
            return
        try:
            request = json.loads(raw)
        except ValueError as exc:
            self._send_json(400, error_body(400, f"request body is not JSON: {exc}"))
            return
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            self._send_json(400, error_body(400, "request needs a 'messages' list"))
            return
        request[CALLER] = {  # who asked: the client's role headers (agents.requests)
            key: self.headers.get(header)
            for key, header in (("role", "X-Paravt-Role"), ("turn", "X-Paravt-Turn"),
                                ("call", "X-Paravt-Call"))
        }  # fmt: skip
        scripted = self.server.scripted
        scripted._record(request)
        try:
            reply = scripted._responder(request)
        except Exception as exc:  # a broken responder is a 500 the test will see, not a hang
            log.exception("scripted responder raised")
            self._send_json(500, error_body(500, f"responder raised {exc!r}"))
            return
        if isinstance(reply, str):
            reply = Reply(text=reply)
        delay = reply.delay_s if reply.delay_s is not None else scripted.latency_s
        with scripted._slots or contextlib.nullcontext():  # a server's capacity: waits its turn
            if delay > 0 and scripted._stopping.wait(delay):
                self.close_connection = True  # server stopping: drop it as a dying server would
                return
        if reply.drop:
            self._drop()
            return
        if reply.raw_body is not None:
            headers = {"Content-Type": "text/plain; charset=utf-8", **reply.headers}
            self._send(reply.status, reply.raw_body, headers)
        elif reply.status != 200:
            self._send_json(reply.status, error_body(reply.status, reply.text), reply.headers)
        elif request.get("stream"):
            self._send_stream(request, reply, completion_body(request, reply, scripted.model))
        else:
            self._send_json(200, completion_body(request, reply, scripted.model), reply.headers)

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _send_stream(self, request: dict[str, Any], reply: Reply, body: dict[str, Any]) -> None:
        """Send ``body``'s text as SSE chunks, word by word, with chunked transfer encoding."""
        chunks = ChunkStream.like(body, include_usage=wants_usage(request))
        pieces = words(reply.text)
        cut = reply.cut_after is not None
        try:
            self.send_response(200)
            for name, value in {"Content-Type": CONTENT_TYPE, **reply.headers}.items():
                self.send_header(name, value)
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._write_chunk(chunks.start())
            for index, piece in enumerate(pieces[: reply.cut_after] if cut else pieces):
                if reply.before_chunk is not None:
                    reply.before_chunk(index)
                if reply.chunk_delay_s > 0 and self.server.scripted._stopping.wait(
                    reply.chunk_delay_s
                ):
                    cut = True  # server stopping: end as a dying server would
                    break
                self._write_chunk(chunks.text(piece))
            if cut:
                self._drop()
                return
            self._write_chunk(chunks.finish(reply.finish_reason))
            if chunks.include_usage:
                self._write_chunk(chunks.usage(body["usage"]))
            self._write_chunk(DONE)
            self.wfile.write(b"0\r\n\r\n")  # the last chunk of the HTTP body
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self._send(status, data, {"Content-Type": "application/json", **(headers or {})})

    def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. its timeout fired)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # benchmarks open many connections at once

    def __init__(self, address: tuple[str, int], scripted: ScriptedServer) -> None:
        self.scripted = scripted
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def track(self, conn: socket.socket, *, add: bool) -> None:
        with self._connections_lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def close_connections(self) -> None:
        """Cut open keep-alive connections so a stopped server really stops answering."""
        with self._connections_lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("scripted server: error handling %s", client_address, exc_info=True)


class ScriptedServer:
    """OpenAI-compatible chat server with scripted replies, on a daemon thread.

    `responder` is a callable (request body -> text or Reply), a sequence consumed in order
    (the last item then repeats), or one string that answers every request.
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
        slots: int | None = None,
    ) -> None:
        """``slots``: at most that many requests are answered at once, the rest wait their
        turn, as a GPU server's batch is full (None: no limit)."""
        self._responder = as_responder(responder)
        self.latency_s = latency_s
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        self.model = model
        self.max_model_len = max_model_len  # listed at /v1/models, as SGLang and vLLM list it
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
        prog="python -m serving.scripted",
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
        script, latency_s=args.latency, model=args.model, host=args.host, port=args.port,
        slots=args.slots,
    )  # fmt: skip
    server.start()
    print(f"scripted server at {server.base_url} (latency {args.latency}s)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
