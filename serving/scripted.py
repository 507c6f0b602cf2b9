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
import http
import importlib
import itertools
import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from serving.sse import CONTENT_TYPE, DONE, ChunkStream, wants_usage, words

log = logging.getLogger(__name__)

__all__ = ["CALLER", "Reply", "Responder", "ScriptedServer", "main", "role_of"]

CALLER = "_caller"
"""Key under which each recorded request holds its caller's role, turn and call."""


def role_of(request: dict[str, Any]) -> str | None:
    """The role the client declared for a recorded request ("main", "sub_agent", ...)."""
    return (request.get(CALLER) or {}).get("role")


@dataclass
class Reply:
    """One scripted answer to a chat request."""

    text: str = ""
    """The completion text; for a non-200 status, the error message."""
    status: int = 200
    """HTTP status; anything but 200 sends an OpenAI-style error body."""
    delay_s: float | None = None
    """Seconds to wait before answering; overrides the server's latency for this reply."""
    raw_body: bytes | None = None
    """Sent verbatim instead of a JSON body (garbage-response tests); content type
    text/plain unless `headers` names one."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers, e.g. {"Retry-After": "1"}."""
    prompt_tokens: int | None = None
    """Reported usage; default: the number of whitespace words in the request's text."""
    completion_tokens: int | None = None
    """Reported usage; default: the number of whitespace words in `text`."""
    finish_reason: str = "stop"
    """Reported finish reason (e.g. "length" to imitate truncation)."""
    drop: bool = False
    """Close the connection without answering (after the delay), as a dying server does."""
    chunk_delay_s: float = 0.0
    """Stream: seconds to wait before each content chunk."""
    cut_after: int | None = None
    """Stream: close the connection after this many content chunks, before the finish."""
    before_chunk: Callable[[int], object] | None = None
    """Stream: called with each content chunk's index before it is sent (in the handler
    thread; a test can hold the stream there until its client has seen earlier chunks)."""


Responder = Callable[[dict[str, Any]], str | Reply]
"""Gets the parsed request body; returns the completion text or a Reply."""

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}
_FAKE_TOKEN_BASE = 1000


def _as_responder(script: Responder | Sequence[str | Reply] | str) -> Responder:
    """Normalise the three accepted script forms into one callable."""
    if isinstance(script, str | Reply):
        fixed = script
        return lambda _request: fixed
    if callable(script):
        return script
    items = list(script)
    if not items:
        raise ValueError("a reply sequence needs at least one item")
    lock = threading.Lock()
    position = itertools.count()

    def next_item(_request: dict[str, Any]) -> str | Reply:
        with lock:
            index = next(position)
        return items[min(index, len(items) - 1)]

    return next_item


def _request_words(body: dict[str, Any]) -> int:
    """Rough prompt size: whitespace words over every text part of every message."""
    words = 0
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            words += len(content.split())
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "text":
                    words += len(str(part.get("text", "")).split())
    return words


def _completion_body(request: dict[str, Any], reply: Reply, model: str) -> dict[str, Any]:
    """An OpenAI-shaped chat.completion body for `reply`, honouring logprobs/token-id flags."""
    tokens = reply.text.split()
    prompt_tokens = (
        reply.prompt_tokens if reply.prompt_tokens is not None else _request_words(request)
    )
    completion_tokens = (
        reply.completion_tokens if reply.completion_tokens is not None else len(tokens)
    )
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": reply.text},
        "finish_reason": reply.finish_reason,
        "logprobs": None,
    }
    if request.get("logprobs"):
        choice["logprobs"] = {
            "content": [
                {"token": tok, "logprob": -1.0, "bytes": list(tok.encode()), "top_logprobs": []}
                for tok in tokens
            ]
        }
    body: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model") or model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    if request.get("return_token_ids"):
        body["prompt_token_ids"] = [_FAKE_TOKEN_BASE + i for i in range(prompt_tokens)]
        choice["token_ids"] = [_FAKE_TOKEN_BASE + i for i in range(completion_tokens)]
    return body


def _error_body(status: int, message: str) -> dict[str, Any]:
    if status == 429:
        kind = "rate_limit_error"
    elif status >= 500:
        kind = "server_error"
    else:
        kind = _ERROR_TYPES.get(status, "invalid_request_error")
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    return {"error": {"message": message or phrase, "type": kind, "code": status}}


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
            self._send_json(404, _error_body(404, f"no route GET {path}"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path != "/v1/chat/completions":
            self._send_json(404, _error_body(404, f"no route POST {path}"))
            return
        try:
            request = json.loads(raw)
        except ValueError as exc:
            self._send_json(400, _error_body(400, f"request body is not JSON: {exc}"))
            return
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            self._send_json(400, _error_body(400, "request needs a 'messages' list"))
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
            self._send_json(500, _error_body(500, f"responder raised {exc!r}"))
            return
        if isinstance(reply, str):
            reply = Reply(text=reply)
        delay = reply.delay_s if reply.delay_s is not None else scripted.latency_s
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
            self._send_json(reply.status, _error_body(reply.status, reply.text), reply.headers)
        elif request.get("stream"):
            self._send_stream(request, reply, _completion_body(request, reply, scripted.model))
        else:
            self._send_json(200, _completion_body(request, reply, scripted.model), reply.headers)

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
    ) -> None:
        self._responder = _as_responder(responder)
        self.latency_s = latency_s
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
    args = parser.parse_args(argv)
    script: Responder | str = args.reply
    if args.responder:
        module, _, name = args.responder.partition(":")
        script = getattr(importlib.import_module(module), name)
    server = ScriptedServer(
        script, latency_s=args.latency, model=args.model, host=args.host, port=args.port
    )
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
