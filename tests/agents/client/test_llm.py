"""OpenAIChatModel against the scripted server over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import pickle
import socket
from typing import Any

import httpx
import pytest

from agents.client.llm import (
    ChatModel,
    Completion,
    EndpointError,
    OpenAIChatModel,
    SamplingParams,
    Usage,
)
from agents.requests import ModelRequest
from testing.scripted import Reply, ScriptedServer

USER = [{"role": "user", "content": "What happens in the video?"}]
GREEDY = SamplingParams()


def ask(messages, params, prefill=None) -> ModelRequest:
    """The typed request the graph would send for these messages."""
    return ModelRequest(role="main", messages=messages, params=params, prefill=prefill)


class SleepRecorder:
    """Stands in for asyncio.sleep: records backoff delays without waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def client_for(server: ScriptedServer, **kwargs: Any) -> OpenAIChatModel:
    kwargs.setdefault("backoff_s", 0.01)
    kwargs.setdefault("max_backoff_s", 0.05)
    kwargs.setdefault("timeout", 5.0)
    return OpenAIChatModel(server.base_url, **kwargs)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_text_usage_latency_and_model_are_recorded() -> None:
    reply = Reply(text="<answer>B</answer>", prompt_tokens=120, completion_tokens=7)
    with ScriptedServer(reply, latency_s=0.05, model="tiny-vl") as server:
        async with client_for(server) as llm:
            completion = await llm.complete(ask(USER, GREEDY))
    assert completion.text == "<answer>B</answer>"
    assert completion.finish_reason == "stop"
    assert completion.usage == Usage(prompt_tokens=120, completion_tokens=7)
    assert completion.usage.total_tokens == 127
    assert 0.05 <= completion.latency_s < 2.0
    assert completion.model == "tiny-vl"
    assert completion.attempts == 1
    assert completion.logprobs is None
    assert completion.token_ids is None and completion.prompt_token_ids is None
    assert server.requests[0]["model"] == "tiny-vl"  # discovered through GET /v1/models


async def test_sampling_params_and_extra_body_are_sent() -> None:
    params = SamplingParams(temperature=0.7, top_p=0.9, max_tokens=64, seed=3, stop=("</answer>",))
    with ScriptedServer("ok") as server:
        async with client_for(server, model="m", extra_body={"top_k": 20}) as llm:
            await llm.complete(ask(USER, params))
    sent = server.requests[0]
    assert sent["model"] == "m"
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"]) == (0.7, 0.9, 64)
    assert sent["seed"] == 3
    assert sent["stop"] == ["</answer>"]
    assert sent["top_k"] == 20
    assert "logprobs" not in sent and "return_token_ids" not in sent
    assert sent["messages"] == USER


async def test_image_parts_pass_through_unchanged() -> None:
    data_url = "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQg="
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<12.5 seconds>"},
                {"type": "image_url", "image_url": {"url": data_url}},
                {"type": "text", "text": "What is shown?"},
            ],
        }
    ]
    with ScriptedServer("a cat") as server:
        async with client_for(server, model="m") as llm:
            completion = await llm.complete(ask(messages, GREEDY))
    assert completion.text == "a cat"
    assert server.requests[0]["messages"] == messages


async def test_prefill_continues_the_assistant_message_and_returns_only_new_text() -> None:
    with ScriptedServer(' "start_time": 3}</tool_call>') as server:
        async with client_for(server, model="m") as llm:
            completion = await llm.complete(ask(USER, GREEDY, prefill="<tool_call>{"))
    sent = server.requests[0]
    assert sent["messages"] == [*USER, {"role": "assistant", "content": "<tool_call>{"}]
    assert sent["continue_final_message"] is True
    assert sent["add_generation_prompt"] is False
    assert completion.text == ' "start_time": 3}</tool_call>'


async def test_logprobs_and_token_ids_parsed_when_returned() -> None:
    reply = Reply(text="the answer is B", prompt_tokens=9, completion_tokens=4)
    params = SamplingParams(logprobs=True, return_token_ids=True)
    with ScriptedServer(reply) as server:
        async with client_for(server, model="m") as llm:
            completion = await llm.complete(ask(USER, params))
    assert server.requests[0]["logprobs"] is True
    assert server.requests[0]["return_token_ids"] is True
    assert completion.logprobs == (-1.0, -1.0, -1.0, -1.0)
    assert completion.token_ids is not None and len(completion.token_ids) == 4
    assert completion.prompt_token_ids is not None and len(completion.prompt_token_ids) == 9


async def test_image_and_cached_tokens_read_from_usage_details() -> None:
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
        "usage": {
            "prompt_tokens": 300,
            "completion_tokens": 1,
            "prompt_tokens_details": {"image_tokens": 256, "cached_tokens": 32},
        },
    }
    reply = Reply(raw_body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with ScriptedServer(reply) as server:
        async with client_for(server, model="m") as llm:
            completion = await llm.complete(ask(USER, GREEDY))
    assert completion.usage == Usage(300, 1, image_tokens=256, cached_tokens=32)
    assert completion.finish_reason is None


async def test_retries_server_errors_then_succeeds(caplog: pytest.LogCaptureFixture) -> None:
    script = [Reply(status=500, text="boom"), Reply(status=502), "finally"]
    sleep = SleepRecorder()
    with ScriptedServer(script) as server:
        async with client_for(server, model="m", sleep=sleep) as llm:
            with caplog.at_level(logging.WARNING, logger="agents.client.llm"):
                completion = await llm.complete(ask(USER, GREEDY))
    assert completion.text == "finally"
    assert completion.attempts == 3
    assert len(server.requests) == 3
    assert len(sleep.delays) == 2
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert "HTTP 500" in warnings[0].getMessage() and "boom" in warnings[0].getMessage()


async def test_backoff_is_exponential_with_jitter_and_capped() -> None:
    sleep = SleepRecorder()
    with ScriptedServer(Reply(status=503)) as server:
        llm = client_for(server, model="m", sleep=sleep, max_retries=5, max_backoff_s=0.1)
        with pytest.raises(EndpointError):
            await llm.complete(ask(USER, GREEDY))
        await llm.aclose()
    bases = [0.01, 0.02, 0.04, 0.08, 0.1]
    assert len(sleep.delays) == len(bases)
    for delay, base in zip(sleep.delays, bases, strict=True):
        assert base / 2 <= delay <= base


async def test_server_error_every_time_raises_endpoint_error() -> None:
    with ScriptedServer(Reply(status=500, text="CUDA out of memory")) as server:
        async with client_for(server, model="m", max_retries=2) as llm:
            with pytest.raises(EndpointError) as info:
                await llm.complete(ask(USER, GREEDY))
    error = info.value
    assert error.status == 500
    assert error.attempts == 3
    assert error.kind == "status"
    assert error.base_url == server.base_url
    message = str(error)
    assert server.base_url in message
    assert "HTTP 500" in message and "CUDA out of memory" in message
    assert "3 attempts" in message and "log" in message
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [("0.03", 0.03), ("100", 0.05)],  # honoured, and bounded by max_backoff_s
)
async def test_rate_limit_honours_retry_after(retry_after: str, expected: float) -> None:
    sleep = SleepRecorder()
    script = [Reply(status=429, text="slow down", headers={"Retry-After": retry_after}), "ok"]
    with ScriptedServer(script) as server:
        async with client_for(server, model="m", sleep=sleep, backoff_s=0.001) as llm:
            completion = await llm.complete(ask(USER, GREEDY))
    assert completion.text == "ok"
    assert completion.attempts == 2
    assert sleep.delays == [pytest.approx(expected)]


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_client_errors_fail_at_once_with_the_server_text(status: int) -> None:
    with ScriptedServer(Reply(status=status, text="context length exceeded")) as server:
        async with client_for(server, model="m") as llm:
            with pytest.raises(EndpointError) as info:
                await llm.complete(ask(USER, GREEDY))
    assert info.value.status == status
    assert info.value.attempts == 1
    assert "context length exceeded" in str(info.value)
    assert len(server.requests) == 1


async def test_timeout_raises_endpoint_error_mentioning_timeout() -> None:
    with ScriptedServer(Reply(text="too late", delay_s=2.0)) as server:
        async with client_for(server, model="m", timeout=0.2, max_retries=1) as llm:
            with pytest.raises(EndpointError) as info:
                await llm.complete(ask(USER, GREEDY))
    assert info.value.kind == "timeout"
    assert info.value.status is None
    assert info.value.attempts == 2
    assert "timed out" in str(info.value) and "0.2s" in str(info.value)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(raw_body=b"<html>502 Bad Gateway</html>"),
        Reply(raw_body=b"{not json", headers={"Content-Type": "application/json"}),
        Reply(raw_body=b'{"id": "x"}', headers={"Content-Type": "application/json"}),
        Reply(raw_body=b'{"choices": [{}]}', headers={"Content-Type": "application/json"}),
        Reply(raw_body=b"[1, 2]", headers={"Content-Type": "application/json"}),
    ],
    ids=["html", "bad-json", "no-choices", "no-message", "not-an-object"],
)
async def test_malformed_body_is_retried_then_raises(reply: Reply) -> None:
    with ScriptedServer(reply) as server:
        async with client_for(server, model="m", max_retries=1) as llm:
            with pytest.raises(EndpointError) as info:
                await llm.complete(ask(USER, GREEDY))
    assert info.value.kind == "malformed"
    assert info.value.attempts == 2
    assert "malformed" in str(info.value)
    assert len(server.requests) == 2


async def test_malformed_then_good_body_succeeds() -> None:
    with ScriptedServer([Reply(raw_body=b"garbage"), "fine"]) as server:
        async with client_for(server, model="m") as llm:
            completion = await llm.complete(ask(USER, GREEDY))
    assert (completion.text, completion.attempts) == ("fine", 2)


async def test_connection_refused_names_the_url_and_how_to_start_a_server() -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    sleep = SleepRecorder()
    async with OpenAIChatModel(base_url, model="m", max_retries=2, sleep=sleep) as llm:
        with pytest.raises(EndpointError) as info:
            await llm.complete(ask(USER, GREEDY))
    error = info.value
    assert error.kind == "connection"
    assert error.attempts == 3
    assert len(sleep.delays) == 2
    assert "connection refused" in str(error)
    assert base_url in str(error)
    assert "Is the server running?" in str(error) and "sglang.launch_server" in str(error)


async def test_model_name_comes_from_models_endpoint_and_is_cached() -> None:
    server = ScriptedServer(model="Qwen3-VL-2B").start()
    llm = client_for(server)
    try:
        assert await llm.model_name() == "Qwen3-VL-2B"
    finally:
        server.stop()
    assert await llm.model_name() == "Qwen3-VL-2B"  # server gone: answered from the cache
    await llm.aclose()
    assert await OpenAIChatModel(model="given").model_name() == "given"


async def test_injected_http_client_is_used_and_left_open() -> None:
    seen: list[str] = []

    async def on_request(request: httpx.Request) -> None:
        seen.append(request.url.path)

    async with httpx.AsyncClient(event_hooks={"request": [on_request]}) as http_client:
        with ScriptedServer("ok") as server:
            async with client_for(server, model="m", http_client=http_client) as llm:
                assert (await llm.complete(ask(USER, GREEDY))).text == "ok"
            assert not http_client.is_closed
    assert seen == ["/v1/chat/completions"]


def test_completion_record_is_json_and_round_trips() -> None:
    completion = Completion(
        text="hi",
        finish_reason="stop",
        usage=Usage(10, 2, image_tokens=8),
        latency_s=0.5,
        model="m",
        attempts=1,
        prompt_token_ids=(1, 2),
        token_ids=(3, 4),
        logprobs=(-0.5, -1.5),
    )
    record = json.loads(json.dumps(completion.to_record()))
    assert record["usage"] == {
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "image_tokens": 8,
        "cached_tokens": None,
        "total_tokens": 12,
    }
    assert record["token_ids"] == [3, 4]
    assert Completion.from_record(record) == completion


def test_endpoint_error_survives_pickling_and_client_satisfies_protocol() -> None:
    error = EndpointError("down", base_url="http://x/v1", status=503, attempts=4, kind="status")
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.base_url, clone.status, clone.attempts, clone.kind) == (
        "down",
        "http://x/v1",
        503,
        4,
        "status",
    )
    assert isinstance(OpenAIChatModel(model="m"), ChatModel)
