"""Token ids as each server returns them: SGLang (``choices[].response_token_ids`` and
``choices[].prompt_token_ids``) and vLLM (``choices[].token_ids``, top-level
``prompt_token_ids``), read by the client from real HTTP."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from agents.client.completion import completion_from_body
from agents.client.llm import OpenAIChatModel
from agents.requests import ModelRequest, SamplingParams
from testing.scripted import Reply, ScriptedServer

SERVERS = Path(__file__).parents[2] / "data/servers"
SGLANG = json.loads((SERVERS / "sglang-0.5.23-chat-return-token-ids.json").read_text())["body"]


def vllm_body() -> dict:
    """The same completion in vLLM's shape (vllm/entrypoints/openai/protocol.py,
    ``ChatCompletionResponse.prompt_token_ids``, ``ChatCompletionResponseChoice.token_ids``;
    built from the SGLang record, not recorded from a vLLM server)."""
    body = copy.deepcopy(SGLANG)
    choice = body["choices"][0]
    body["prompt_token_ids"] = choice.pop("prompt_token_ids")
    choice["token_ids"] = choice.pop("response_token_ids")
    return body


CHOICE = SGLANG["choices"][0]


@pytest.mark.parametrize("body", [SGLANG, vllm_body()], ids=["sglang", "vllm"])
def test_both_servers_token_id_fields_are_read(body):
    completion = completion_from_body(body, model="m")
    assert completion.token_ids == tuple(CHOICE["response_token_ids"])
    assert completion.prompt_token_ids == tuple(CHOICE["prompt_token_ids"])
    assert len(completion.logprobs) == 4


def test_a_body_without_token_ids_has_none():
    body = copy.deepcopy(SGLANG)
    for key in ("response_token_ids", "prompt_token_ids"):
        body["choices"][0].pop(key)
    completion = completion_from_body(body, model="m")
    assert completion.token_ids is None and completion.prompt_token_ids is None


@pytest.mark.parametrize("body", [SGLANG, vllm_body()], ids=["sglang", "vllm"])
async def test_the_client_reads_them_over_http(body):
    with ScriptedServer(
        Reply(raw_body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    ) as server:
        async with OpenAIChatModel(server.base_url) as llm:
            request = ModelRequest(
                role="main",
                messages=[{"role": "user", "content": "What?"}],
                params=SamplingParams(return_token_ids=True, logprobs=True),
            )
            completion = await llm.complete(request)
    assert server.requests[0]["return_token_ids"] is True
    assert completion.token_ids == tuple(CHOICE["response_token_ids"])
    assert completion.prompt_token_ids == tuple(CHOICE["prompt_token_ids"])
