"""The scripted OpenAI-compatible server: real HTTP on 127.0.0.1, overlapping latency, scripts."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from testing.scripted import Reply, ScriptedServer


def _post(base_url: str, body: dict[str, Any], timeout: float = 5.0) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())


def _get(base_url: str, path: str) -> Any:
    with urllib.request.urlopen(f"{base_url}{path}", timeout=5) as response:
        return json.loads(response.read())


def _chat(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], **extra}


def test_concurrent_requests_overlap() -> None:
    with ScriptedServer("done", latency_s=1.0) as server:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda i: _post(server.base_url, _chat(f"q{i}")), range(4)))
        elapsed = time.perf_counter() - start
    assert [status for status, _ in results] == [200] * 4
    assert all(body["choices"][0]["message"]["content"] == "done" for _, body in results)
    assert 1.0 <= elapsed < 2.0, f"4 requests of 1 s took {elapsed:.2f}s: not overlapping"


def test_sequence_is_consumed_in_order_then_repeats_last() -> None:
    with ScriptedServer(["one", Reply(text="two"), "three"]) as server:
        texts = [
            _post(server.base_url, _chat())[1]["choices"][0]["message"]["content"] for _ in range(5)
        ]
    assert texts == ["one", "two", "three", "three", "three"]


def test_callable_responder_sees_request_and_requests_are_captured() -> None:
    def echo(request: dict[str, Any]) -> str:
        return "echo " + request["messages"][-1]["content"]

    with ScriptedServer(echo) as server:
        _, first = _post(server.base_url, _chat("alpha", temperature=0.7))
        _, second = _post(server.base_url, _chat("beta"))
    assert first["choices"][0]["message"]["content"] == "echo alpha"
    assert second["choices"][0]["message"]["content"] == "echo beta"
    assert [r["messages"][-1]["content"] for r in server.requests] == ["alpha", "beta"]
    assert server.requests[0]["temperature"] == 0.7


def test_completion_body_is_openai_shaped() -> None:
    with ScriptedServer("three word reply", model="tiny") as server:
        status, body = _post(server.base_url, _chat("a four word prompt"))
    assert status == 200
    assert body["object"] == "chat.completion"
    assert body["id"].startswith("chatcmpl-")
    assert isinstance(body["created"], int)
    choice = body["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "three word reply"}
    assert choice["finish_reason"] == "stop"
    assert choice["logprobs"] is None
    assert body["usage"] == {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}
    assert "prompt_token_ids" not in body and "token_ids" not in choice


def test_logprobs_and_token_ids_on_request() -> None:
    reply = Reply(text="a b", prompt_tokens=5, completion_tokens=2)
    with ScriptedServer(reply) as server:
        _, body = _post(server.base_url, _chat(logprobs=True, return_token_ids=True))
    choice = body["choices"][0]
    assert [e["logprob"] for e in choice["logprobs"]["content"]] == [-1.0, -1.0]
    assert [e["token"] for e in choice["logprobs"]["content"]] == ["a", "b"]
    assert len(body["prompt_token_ids"]) == 5
    assert len(choice["token_ids"]) == 2


def test_error_status_raw_body_and_headers() -> None:
    script = [
        Reply(status=503, text="overloaded", headers={"Retry-After": "2"}),
        Reply(raw_body=b"<html>not json</html>"),
    ]
    with ScriptedServer(script) as server:
        status, body = _post(server.base_url, _chat())
        assert status == 503
        assert body["error"]["message"] == "overloaded"
        assert body["error"]["type"] == "server_error"
        request = urllib.request.Request(
            f"{server.base_url}/chat/completions", data=json.dumps(_chat()).encode()
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.read() == b"<html>not json</html>"
            assert response.headers["Content-Type"].startswith("text/plain")


def test_models_health_and_unknown_route() -> None:
    with ScriptedServer(model="tiny-vl") as server:
        assert [m["id"] for m in _get(server.base_url, "/models")["data"]] == ["tiny-vl"]
        assert _get(server.base_url.removesuffix("/v1"), "/health") == {"status": "ok"}
        with pytest.raises(urllib.error.HTTPError) as info:
            _get(server.base_url, "/nope")
        info.value.close()
        assert info.value.code == 404
        status, body = _post(server.base_url, {"no": "messages"})
        assert status == 400 and "messages" in body["error"]["message"]


def test_stop_wakes_sleeping_handlers_and_frees_the_port() -> None:
    server = ScriptedServer("late", latency_s=30).start()
    base_url = server.base_url
    outcome: list[BaseException | tuple[int, Any]] = []

    def call() -> None:
        try:
            outcome.append(_post(base_url, _chat()))
        except Exception as exc:  # the dropped connection is the expected outcome
            outcome.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    while not server.requests:
        time.sleep(0.01)
    start = time.perf_counter()
    server.stop()
    worker.join(timeout=5)
    assert time.perf_counter() - start < 2
    assert len(outcome) == 1 and isinstance(outcome[0], Exception)
    with pytest.raises(urllib.error.URLError):
        _get(base_url, "/models")
