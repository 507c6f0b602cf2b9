"""Token streaming over real HTTP: `OpenAIChatModel(on_text=)` against the scripted server."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest

from agents.client.completion import EndpointError, Usage
from agents.client.llm import OpenAIChatModel
from agents.requests import ModelRequest, SamplingParams
from serving.sse import words
from testing.scripted import CALLER, Reply, ScriptedServer

USER = [{"role": "user", "content": "What happens in the video?"}]
TEXT = "<think>\nThe red ball enters at 12 s.\n</think>\n<answer>B</answer>"


def ask(params: SamplingParams | None = None, **fields: Any) -> ModelRequest:
    return ModelRequest(role="main", messages=USER, params=params or SamplingParams(), **fields)


def client_for(server: ScriptedServer, **kwargs: Any) -> OpenAIChatModel:
    kwargs = {"model": "m", "timeout": 5.0, "backoff_s": 0.01, "max_backoff_s": 0.02, **kwargs}
    return OpenAIChatModel(server.base_url, **kwargs)


def sse(*events: dict[str, Any] | str) -> bytes:
    """A raw event-stream body; a str event is sent as it is (e.g. "[DONE]")."""
    lines = [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events]
    return "".join(lines).encode()


def chunk(content: str | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"object": "chat.completion.chunk", "model": "m", "choices": [choice], **extra}


def streamed(body: bytes) -> Reply:
    return Reply(raw_body=body, headers={"Content-Type": "text/event-stream"})


async def test_deltas_arrive_while_the_server_still_holds_the_rest() -> None:
    seen_first, held = threading.Event(), []

    def before_chunk(index: int) -> None:  # hold chunk 1 until the client has shown chunk 0
        if index == 1:
            held.append(seen_first.wait(10))

    deltas: list[str] = []

    def on_text(delta: str) -> None:
        deltas.append(delta)
        seen_first.set()

    reply = Reply(TEXT, prompt_tokens=40, completion_tokens=9, before_chunk=before_chunk)
    with ScriptedServer(reply) as server:
        async with client_for(server) as llm:
            completion = await llm.complete(ask(turn=2, call_index=1), on_text=on_text)
    assert held == [True]  # chunk 0 reached on_text before chunk 1 was even sent
    assert deltas == words(TEXT) and len(deltas) >= 5
    assert "".join(deltas) == completion.text == TEXT
    assert completion.usage == Usage(prompt_tokens=40, completion_tokens=9)
    assert (completion.finish_reason, completion.attempts, completion.model) == ("stop", 1, "m")
    sent = server.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent[CALLER] == {"role": "main", "turn": "2", "call": "1"}


async def test_stream_matches_the_unstreamed_completion() -> None:
    reply = Reply(TEXT, prompt_tokens=12, completion_tokens=7, finish_reason="length")
    with ScriptedServer(reply) as server:
        async with client_for(server) as llm:
            plain = await llm.complete(ask())
            live = await llm.complete(ask(), on_text=lambda _: None)
    assert "stream" not in server.requests[0] and "stream_options" not in server.requests[0]
    fields = ("text", "finish_reason", "usage", "model", "attempts", "token_ids", "logprobs")
    assert {f: getattr(live, f) for f in fields} == {f: getattr(plain, f) for f in fields}


async def test_usage_details_comments_and_multiline_events_are_read() -> None:
    usage = {
        "prompt_tokens": 300,
        "completion_tokens": 2,
        "prompt_tokens_details": {"image_tokens": 256, "cached_tokens": 32},
    }
    body = b": keep-alive\n\n" + sse(chunk(""), chunk("Hel"), chunk("lo", finish="stop"))
    body += b'event: chunk\ndata: {"choices": [],\ndata: "usage": ' + json.dumps(usage).encode()
    body += b"}\n\n" + sse("[DONE]")
    deltas: list[str] = []
    with ScriptedServer(streamed(body)) as server:
        async with client_for(server) as llm:
            completion = await llm.complete(ask(), on_text=deltas.append)
    assert deltas == ["Hel", "lo"] and completion.text == "Hello"
    assert completion.usage == Usage(300, 2, image_tokens=256, cached_tokens=32)


@pytest.mark.parametrize(
    "params", [SamplingParams(logprobs=True), SamplingParams(return_token_ids=True)]
)
async def test_logprobs_or_token_ids_are_not_streamed(params: SamplingParams) -> None:
    deltas: list[str] = []
    with ScriptedServer(TEXT) as server:
        async with client_for(server) as llm:
            completion = await llm.complete(ask(params), on_text=deltas.append)
    assert "stream" not in server.requests[0]
    assert deltas == [TEXT] and completion.text == TEXT  # once, whole


async def test_a_server_that_ignores_stream_gives_the_text_once() -> None:
    body = {"model": "m", "choices": [{"message": {"content": TEXT}, "finish_reason": "stop"}]}
    reply = Reply(raw_body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    deltas: list[str] = []
    with ScriptedServer(reply) as server:
        async with client_for(server) as llm:
            completion = await llm.complete(ask(), on_text=deltas.append)
    assert deltas == [TEXT] and completion.text == TEXT


async def test_a_stream_cut_midway_is_retried_then_reported() -> None:
    deltas: list[str] = []
    with ScriptedServer(Reply(TEXT, cut_after=2)) as server:
        async with client_for(server, max_retries=2) as llm:
            with pytest.raises(EndpointError) as caught:
                await llm.complete(ask(), on_text=deltas.append)
    error = caught.value
    assert (error.kind, error.attempts, len(server.requests)) == ("connection", 3, 3)
    assert "chat completion stream" in str(error) and server.base_url in str(error)
    assert "the stream broke off after 3 events" in str(error)  # role chunk + 2 deltas
    assert "dropped the stream mid-answer" in str(error)
    assert deltas == words(TEXT)[:2] * 3  # each retry restarts the text


async def test_a_retried_stream_restarts_its_text_and_succeeds() -> None:
    deltas: list[str] = []
    with ScriptedServer([Reply(TEXT, cut_after=1), Reply(TEXT)]) as server:
        async with client_for(server) as llm:
            completion = await llm.complete(ask(), on_text=deltas.append)
    assert completion.text == TEXT and completion.attempts == 2
    assert deltas == words(TEXT)[:1] + words(TEXT)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (sse(chunk("Hel"), chunk("lo", finish="stop")), "without 'data: [DONE]'"),
        (sse(chunk("Hello"), "[DONE]"), "without a finish_reason"),
        (sse(chunk("Hel"), {"error": {"message": "worker died"}}), "worker died"),
        (sse(chunk("Hel"), "{not json"), "not JSON"),
    ],
)
async def test_a_broken_event_stream_is_retried_as_malformed(body: bytes, expected: str) -> None:
    with ScriptedServer(streamed(body)) as server:
        async with client_for(server, max_retries=1) as llm:
            with pytest.raises(EndpointError) as caught:
                await llm.complete(ask(), on_text=lambda _: None)
    assert (caught.value.kind, caught.value.attempts) == ("malformed", 2)
    assert expected in str(caught.value)


async def test_a_stalled_stream_times_out() -> None:
    with ScriptedServer(Reply(TEXT, chunk_delay_s=3.0)) as server:
        async with client_for(server, timeout=0.3, max_retries=0) as llm:
            with pytest.raises(EndpointError) as caught:
                await llm.complete(ask(), on_text=lambda _: None)
    assert caught.value.kind == "timeout" and "the stream stalled" in str(caught.value)


async def test_an_error_status_before_the_stream_is_handled_as_unstreamed() -> None:
    deltas: list[str] = []
    with ScriptedServer(Reply(status=400, text="context length exceeded")) as server:
        async with client_for(server) as llm:
            with pytest.raises(EndpointError) as caught:
                await llm.complete(ask(), on_text=deltas.append)
    assert (caught.value.kind, caught.value.status, caught.value.attempts) == ("status", 400, 1)
    assert "context length exceeded" in str(caught.value) and deltas == []
    with ScriptedServer([Reply(status=503), TEXT]) as server:
        async with client_for(server) as llm:
            completion = await llm.complete(ask(), on_text=deltas.append)
    assert completion.attempts == 2 and "".join(deltas) == TEXT


@pytest.mark.parametrize("include_usage", [True, False])
def test_scripted_server_sends_openai_shaped_chunks(include_usage: bool) -> None:
    body = {"model": "m", "messages": USER, "stream": True}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    with ScriptedServer(Reply("one two three", prompt_tokens=4)) as server:
        url = f"{server.base_url}/chat/completions"
        with httpx.stream("POST", url, json=body) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            events = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert [c["choices"][0]["delta"]["content"] for c in chunks[1:4]] == ["one ", "two ", "three"]
    assert chunks[4]["choices"][0] | {"logprobs": None} == {
        "index": 0,
        "delta": {},
        "finish_reason": "stop",
        "logprobs": None,
    }
    if include_usage:
        assert len(chunks) == 6 and chunks[5]["choices"] == []
        assert chunks[5]["usage"] == {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}
        assert all(c["usage"] is None for c in chunks[:5])
    else:
        assert len(chunks) == 5 and all("usage" not in c for c in chunks)


def test_scripted_errors_stay_plain_json_when_streaming() -> None:
    body = {"model": "m", "messages": USER, "stream": True}
    reply = Reply(status=429, text="slow down", headers={"Retry-After": "1"})
    with ScriptedServer(reply) as server:
        response = httpx.post(f"{server.base_url}/chat/completions", json=body)
    assert response.status_code == 429 and response.headers["retry-after"] == "1"
    assert response.json()["error"]["message"] == "slow down"


async def test_graph_messages_stream_shows_tokens_while_the_endpoint_generates(
    needle_video, board
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs.builder import compile_graph
    from graphs.context import Context

    answer = "\nThe ball is red all along, so A.\n</think>\n<answer>A</answer>"
    first_token, held = threading.Event(), []

    def before_chunk(index: int) -> None:
        if index == 3:
            held.append(first_token.wait(10))

    small = Context(overview_frames=4, overview_max_pixels=4096, crop_max_pixels=4096)
    tokens: list[str] = []
    with ScriptedServer(Reply(answer, before_chunk=before_chunk)) as server:
        async with client_for(server, model=None) as llm:
            graph = compile_graph(llm, board, checkpointer=InMemorySaver())
            payload = {"video": str(needle_video.path), "question": "Colour?", "run_id": "s1"}
            config = {"configurable": {"thread_id": "s1"}}
            async for message, _ in graph.astream(
                payload, config, context=small, stream_mode="messages"
            ):
                if message.type == "AIMessageChunk" and message.content:
                    tokens.append(message.content)
                    first_token.set()
    assert held == [True]  # a token reached the graph's stream before chunk 3 was sent
    assert len(tokens) >= 3 and "The ball is red all along, so A." in "".join(tokens)


@pytest.mark.parametrize(
    ("stream_mode", "dispatch", "streams"),
    [("messages", "none", True), ("updates", "parallel", True), ("updates", "none", False)],
)
async def test_the_main_turn_streams_only_for_a_listener_or_the_prefetch(
    needle_video, board, stream_mode, dispatch, streams
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs.builder import compile_graph
    from graphs.context import Context

    small = Context(overview_frames=4, overview_max_pixels=4096, dispatch=dispatch)
    with ScriptedServer("\nRed.\n</think>\n<answer>A</answer>") as server:
        async with client_for(server, model=None) as llm:
            graph = compile_graph(llm, board, checkpointer=InMemorySaver())
            payload = {"video": str(needle_video.path), "question": "Colour?", "run_id": "m1"}
            config = {"configurable": {"thread_id": "m1"}}
            async for _ in graph.astream(payload, config, context=small, stream_mode=stream_mode):
                pass
    assert [bool(r.get("stream")) for r in server.requests] == [streams]
