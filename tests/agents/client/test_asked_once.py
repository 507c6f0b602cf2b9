"""The client's once-per-process questions are asked once, however many samples start at once."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import pytest

from agents.client.asked_once import AskedOnce
from agents.client.llm import OpenAIChatModel
from agents.protocol import THINK_PREFIX
from agents.requests import ModelRequest
from testing.scripted import ScriptedServer

REQUEST = ModelRequest(
    role="main", messages=[{"role": "user", "content": "?"}], prefill=THINK_PREFIX
)


def counting_client() -> tuple[Counter[str], httpx.AsyncClient]:
    """An HTTP client that counts the requests it sends by method and path."""
    paths: Counter[str] = Counter()

    async def keep(request: httpx.Request) -> None:
        paths[f"{request.method} {request.url.path}"] += 1

    return paths, httpx.AsyncClient(event_hooks={"request": [keep]}, timeout=30)


async def test_sixteen_requests_at_once_ask_the_model_list_and_the_template_once():
    paths, http = counting_client()
    with ScriptedServer("<answer>A</answer>") as server:
        async with OpenAIChatModel(server.base_url, http_client=http) as llm:
            await asyncio.gather(*(llm.complete(REQUEST) for _ in range(16)))
        await http.aclose()
    assert paths["POST /v1/chat/completions"] == 16
    assert paths["GET /v1/models"] == 1
    # the probe: /v1/tokenize, then vLLM's /tokenize (the scripted server has neither)
    assert paths["POST /v1/tokenize"] == 1 and paths["POST /tokenize"] == 1


async def test_a_failed_answer_is_asked_again_and_a_cancelled_caller_leaves_it_to_others():
    asked = AskedOnce()
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.01)
        if calls == 1:
            raise RuntimeError("down")
        return "up"

    with pytest.raises(RuntimeError):
        await asked.get("k", flaky)
    impatient = asyncio.create_task(asked.get("k", flaky))
    patient = asyncio.create_task(asked.get("k", flaky))
    await asyncio.sleep(0)
    impatient.cancel()
    assert await patient == "up"
    assert await asked.get("k", flaky) == "up" and calls == 2
    with pytest.raises(asyncio.CancelledError):
        await impatient


async def test_warm_up_asks_what_the_first_turn_would_and_a_down_endpoint_is_left_to_it():
    paths, http = counting_client()
    with ScriptedServer("<answer>A</answer>") as server:
        async with OpenAIChatModel(server.base_url, http_client=http) as llm:
            await llm.warm_up(THINK_PREFIX)
            asked = sum(paths.values())
            await llm.complete(REQUEST)
        await http.aclose()
    assert asked == 3  # the model list and the probe's two routes
    assert paths["GET /v1/models"] == 1 and paths["POST /v1/chat/completions"] == 1
    down = OpenAIChatModel("http://127.0.0.1:9/v1", max_retries=0)
    await down.warm_up(THINK_PREFIX)  # never raises: the first completion reports it
    await down.aclose()


async def test_closing_the_client_ends_a_question_still_in_flight():
    """Ctrl-C while the model list is asked: the client closes with the request in flight,
    which must end then, not fail later on the closed client with nobody to read it."""
    reached = asyncio.Event()

    async def never_answers(request: httpx.Request) -> httpx.Response:
        reached.set()
        await asyncio.sleep(30)
        return httpx.Response(200, json={"data": []})

    http = httpx.AsyncClient(transport=httpx.MockTransport(never_answers))
    llm = OpenAIChatModel("http://127.0.0.1:9/v1", http_client=http)
    asker = asyncio.ensure_future(llm.served_entry())
    await asyncio.wait_for(reached.wait(), 10)
    in_flight = list(llm._asked._known.values())
    asker.cancel()  # the caller goes first, as a cancelled run's do
    await llm.aclose()
    assert in_flight and all(f.cancelled() for f in in_flight)
    assert llm._asked._known == {}
    await http.aclose()


async def test_cancel_keeps_the_answers_already_known():
    asked = AskedOnce()
    assert await asked.get("known", lambda: asyncio.sleep(0, result=1)) == 1
    slow = asyncio.ensure_future(asked.get("slow", lambda: asyncio.sleep(30)))
    await asyncio.sleep(0)
    await asked.cancel()
    assert await asked.get("known", lambda: asyncio.sleep(0, result=2)) == 1
    with pytest.raises(asyncio.CancelledError):
        await slow
