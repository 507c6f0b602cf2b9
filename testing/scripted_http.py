"""The scripted server's HTTP side: routes, the key check, replies as JSON, SSE or faults
(``testing.scripted`` holds the server and its script)."""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from serving.sse import CONTENT_TYPE, DONE, ChunkStream, wants_usage, words
from testing.scripted_replies import Reply, completion_body, error_body

log = logging.getLogger(__name__)

CALLER = "_caller"
"""Key under which each recorded request holds its caller's role, turn and call."""


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

    def _authorized(self) -> bool:
        """Whether the request carries the server's key (any request does, without one);
        a 401 is sent when it does not, as vLLM's ``--api-key`` answers."""
        scripted = self.server.scripted
        scripted.authorizations.append(self.headers.get("Authorization"))
        if scripted.api_key is None or self.headers.get("Authorization") == (
            f"Bearer {scripted.api_key}"
        ):
            return True
        self._send_json(401, error_body(401, "Unauthorized"))
        return False

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        scripted = self.server.scripted
        if path in ("/health", "/v1/health"):
            self._send_json(200, {"status": "ok"})
        elif not self._authorized():
            return
        elif path == "/v1/models":
            model = {"id": scripted.model, "object": "model", "created": 0, "owned_by": "scripted"}
            if scripted.max_model_len is not None:
                model["max_model_len"] = scripted.max_model_len
            self._send_json(200, {"object": "list", "data": [{**model, **scripted.model_fields}]})
        else:
            self._send_json(404, error_body(404, f"no route GET {path}"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self._authorized():
            return
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
            for key, header in (
                ("role", "X-Paravt-Role"),
                ("turn", "X-Paravt-Turn"),
                ("call", "X-Paravt-Call"),
            )
        }
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

    def __init__(self, address: tuple[str, int], scripted: Any) -> None:
        # `scripted`: the testing.scripted.ScriptedServer that owns this HTTP server
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
