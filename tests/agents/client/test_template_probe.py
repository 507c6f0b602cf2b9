"""A chat template that already opens the think block gets no second opener: the shipped nano
on the real local server, once with its own template and once with a Thinking-style copy
(the generation prompt ends ``<think>\\n``, as Qwen3-VL Thinking checkpoints' do)."""

from __future__ import annotations

import json

import httpx
import pytest

from agents.client.llm import OpenAIChatModel
from agents.client.template_probe import generation_prompt
from agents.protocol import THINK_PREFIX
from agents.requests import ModelRequest, SamplingParams
from serving.launch import local_server
from testing.scripted import ScriptedServer
from tests.support.checkpoints import checkpoint

transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("thinking", [False, True], ids=["instruct", "thinking"])
async def test_the_think_block_is_opened_exactly_once(tmp_path, thinking):
    model = checkpoint(tmp_path / "model", thinking)
    sent: list[dict] = []

    async def keep(request: httpx.Request) -> None:
        if request.url.path.endswith("/chat/completions"):
            sent.append(json.loads(request.content))

    request = ModelRequest(
        role="main",
        messages=[{"role": "user", "content": "What colour is the circle?"}],
        params=SamplingParams(temperature=0.0, max_tokens=2, return_token_ids=True),
        prefill=THINK_PREFIX,
    )
    with local_server(model, log_path=tmp_path / "server.log") as base_url:
        http = httpx.AsyncClient(event_hooks={"request": [keep]}, timeout=60)
        async with OpenAIChatModel(base_url, http_client=http) as llm:
            completion = await llm.complete(request)
            again = await llm.complete(request)  # the probe's answer is kept
        await http.aclose()
    prompt = transformers.AutoTokenizer.from_pretrained(model).decode(completion.prompt_token_ids)
    assert prompt.endswith("<|im_start|>assistant\n<think>\n") and prompt.count("<think>") == 1
    assert again.prompt_token_ids == completion.prompt_token_ids
    prefilled = [body.get("continue_final_message", False) for body in sent]
    assert prefilled == [not thinking] * 2
    assert all(
        body["messages"][-1]["role"] == ("user" if thinking else "assistant") for body in sent
    )


async def test_a_server_without_tokenize_routes_keeps_the_prefill():
    with ScriptedServer("<answer>A</answer>") as server:
        async with OpenAIChatModel(server.base_url) as llm:
            assert await generation_prompt(llm._post_json, server.base_url, "scripted") is None
            request = ModelRequest(
                role="main", messages=[{"role": "user", "content": "?"}], prefill=THINK_PREFIX
            )
            await llm.complete(request)
    assert server.requests[0]["messages"][-1] == {"role": "assistant", "content": THINK_PREFIX}
