"""training.areal.workflow's proxy path (AReaL's OpenAI-compatible proxy, text only) on a fake
proxy: httpx.MockTransport answers as the proxy does, so no sockets and no AReaL."""

from __future__ import annotations

import json
import pickle
from typing import Any

import httpx
import pytest

import training.areal.workflow as aw
from agents.protocol import THINK_PREFIX
from agents.requests import ROLE_HEADER, ModelRequest
from tests.support.fakes import ScriptedModel
from training.para_grpo import ParaGRPOConfig, trace_reward

OPTIONS = ["A. red", "B. green", "C. blue", "D. yellow"]


# --- the agent on a fake AReaL proxy (httpx.MockTransport: no sockets, no AReaL) ---------------


class FakeProxy:
    """Answers like AReaL's proxy: session key required, /chat/completions only, no /models."""

    def __init__(self, main: list[str], *, status: int = 200, key: str = "session-key"):
        self.main, self.status, self.key = list(main), status, key
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.headers.get("authorization") != f"Bearer {self.key}":
            return httpx.Response(401, json={"detail": "Invalid or expired session API key."})
        if request.method != "POST" or request.url.path != "/chat/completions":
            return httpx.Response(404, json={"detail": "Not Found"})
        body = json.loads(request.content)
        body["role"] = request.headers.get(ROLE_HEADER)  # who asked (agents.requests)
        self.bodies.append(body)
        if self.status != 200:
            return httpx.Response(self.status, json={"detail": "engine down"})
        is_sub = body["role"] == "sub_agent"
        text = "A red circle with the word OCEAN." if is_sub else self.main.pop(0)
        return httpx.Response(
            200,
            json={
                "id": f"chatcmpl-{len(self.bodies)}",
                "object": "chat.completion",
                "created": 0,
                "model": "None",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": text},
                    }
                ],
                "usage": {
                    "prompt_tokens": 50,
                    "completion_tokens": len(text.split()),
                    "total_tokens": 50 + len(text.split()),
                },
            },
        )

    def requests(self, sub: bool) -> list[dict[str, Any]]:
        return [b for b in self.bodies if (b["role"] == "sub_agent") == sub]


def row(video, **extra) -> dict[str, Any]:
    return {
        "id": "q-proxy",
        "video": video.path,
        "question": "What colour is the shape?",
        "options": OPTIONS,
        "kind": "multiple_choice",
        "target": "A",
        **extra,
    }


async def run_agent(proxy: FakeProxy, video, tmp_path, **kwargs) -> tuple[Any, aw.ParaVTAgent]:
    agent = aw.ParaVTAgent(
        kwargs.pop("grpo", {}),
        {"overview_max_pixels": 4096, "crop_max_frames": 4, "crop_max_pixels": 4096},
        board_path=str(tmp_path / "board.sqlite"),
        log_stats=False,
    )
    async with httpx.AsyncClient(transport=httpx.MockTransport(proxy)) as http_client:
        reward = await agent.run(
            row(video, **kwargs),
            base_url="http://proxy.invalid:8000",
            api_key=proxy.key,
            http_client=http_client,
        )
    return reward, agent


async def test_run_through_the_proxy_returns_the_episode_reward(needle_video, tmp_path):
    window = '{"name": "crop_video", "arguments": {"start_time": 0, "end_time": 30}}'
    # Generated text only: the rollout chat template already ends the prompt with <think>\n.
    proxy = FakeProxy(
        [f"Look closer.</think><tool_call>{window}</tool_call>", "Red.</think><answer>A</answer>"]
    )
    reward, agent = await run_agent(proxy, needle_video, tmp_path)

    assert isinstance(reward, float)
    (run,) = agent.board.runs()
    trace = agent.board.trace(run["run_id"])
    main_calls = [c for c in trace["model_calls"] if c["agent"] == "main"]
    assert [c["prefill"] for c in main_calls] == [THINK_PREFIX, THINK_PREFIX]  # scored with it
    parts = trace_reward(trace, target="A", settings=agent.grpo.reward_settings())
    assert reward == parts.total and parts.accuracy == 1.0 and parts.tool == 0.8

    main, sub = proxy.requests(sub=False), proxy.requests(sub=True)
    assert len(main) == 2 and len(sub) == 1
    for body in main:  # no prefill message, no server-specific extensions, recipe sampling
        assert body["messages"][-1]["role"] == "user"
        assert "continue_final_message" not in body and "store" not in body
        assert (body["model"], body["temperature"], body["max_tokens"]) == ("default", 0.7, 2048)
    assert sub[0]["store"] is False and sub[0]["temperature"] == 0.0
    images = sum(p.get("type") == "image_url" for p in main[0]["messages"][1]["content"])
    assert images == ParaGRPOConfig().overview_frames("q-proxy")  # nFrames Gating, per prompt


async def test_trained_subagents_are_recorded_by_the_proxy(needle_video, tmp_path):
    window = '{"name": "crop_video", "arguments": {"start_time": 0, "end_time": 30}}'
    proxy = FakeProxy(
        [f"Look.</think><tool_call>{window}</tool_call>", "x</think><answer>B</answer>"]
    )
    await run_agent(proxy, needle_video, tmp_path, grpo={"train_subagents": True})
    assert "store" not in proxy.requests(sub=True)[0]


async def test_a_failed_proxy_rejects_the_rollout_without_retrying(needle_video, tmp_path):
    proxy = FakeProxy([], status=500)
    with pytest.raises(aw.UnjudgedRollout, match="q-proxy"):
        await run_agent(proxy, needle_video, tmp_path)
    assert len(proxy.bodies) == 1  # a retry would leave an orphan completion in the session


async def test_an_unjudgeable_answer_rejects_the_rollout(needle_video, tmp_path):
    proxy = FakeProxy(["Red.</think><answer>A</answer>"])
    with pytest.raises(aw.UnjudgedRollout, match="cannot be judged"):
        await run_agent(proxy, needle_video, tmp_path, target="not a letter")


async def test_the_proxy_model_routes_and_refuses_a_prefill_it_cannot_send():
    main, sub = ScriptedModel(main=["main"]), ScriptedModel(sub=lambda r: "sub")
    llm = aw.ProxyModel(main, sub, template_prefill=None)
    user = [{"role": "system", "content": "main"}, {"role": "user", "content": "q"}]
    sub_request = ModelRequest(role="sub_agent", messages=user, call_index=0)
    assert (await llm.complete(sub_request)).text == "sub"
    assert (await llm.complete(ModelRequest(role="main", messages=user))).text == "main"
    with pytest.raises(ValueError, match="chat template"):
        await llm.complete(ModelRequest(role="main", messages=user, prefill=THINK_PREFIX))


def test_subproc_mode_reads_the_proxy_from_the_environment(monkeypatch):
    agent = aw.ParaVTAgent(log_stats=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        agent._clients({})
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.0.0.2:9000")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    main, sub = agent._clients({})
    assert main.base_url == sub.base_url == "http://10.0.0.2:9000"
    assert sub.extra_body == {"store": False} and main.extra_body == {}


def test_the_agent_survives_pickling_for_subproc_mode(tmp_path):
    agent = aw.ParaVTAgent({"arm": "grpo"}, board_path=str(tmp_path / "b.sqlite"))
    assert agent.board is not None
    copy = pickle.loads(pickle.dumps(agent))
    assert copy.grpo.arm == "grpo" and copy._board is None
