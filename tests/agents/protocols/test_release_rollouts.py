"""``release-rl`` builds the chat requests the ParaVT release's RL workflow holds.

`tests/data/release_protocol/rl_requests.json` holds what EvolvingLMMs-Lab/ParaVT@cf55249's
``HierarchicalAgentWorkflow`` asked its engine for on 14 rollouts, under the PARA-GRPO and
vanilla GRPO recipes (tests/parity/record_release_rollouts.py ran it, with the real
qwen-vl-utils). Each rollout runs here through the graph, from the same parquet row read by
this project's reader (`training.sft_data.paravt_prompts`), against a real HTTP server that
answers with the same generations. Asserted per main-agent request: roles, order and every
text part verbatim (system prompt with the tools message, time labels, tool responses), the
images' sizes and frame indices exactly and their pixels within tolerance, the Think Prefix,
temperature and token cap; per sub-agent request the same, as a set (they run in parallel);
and how many sub-agents ran.

Two departures are asserted as such: a sub-agent asks for 512 new tokens where the workflow
asks for 2,048 and cuts the text at 512 tokens (the text is the same, without the workflow's
tokenizer here), and the release's token stream after the first turn is not a chat turn
(`test_the_release_token_stream_drops_the_next_turns_header`).
"""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from PIL import Image

from agents.client.llm import OpenAIChatModel
from agents.question import Question
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from graphs.store.sqlite_board import Board
from testing.scripted import Reply, ScriptedServer, role_of
from tests.parity import release_episodes as E
from tests.parity import release_rl_episodes as RL
from tests.support.release import PIXEL_TOLERANCE
from training.sft_data import paravt_prompts

RECORDED = json.loads((E.DATA / "rl_requests.json").read_text())
IMAGES = RECORDED["images"]
EPISODES = {e["id"]: e for e in RECORDED["episodes"]}


def _responder(episode: dict):
    mains = [
        Reply(r["text"], finish_reason="stop" if r["stopped"] else "length")
        for r in RL.rl_replies(episode)
    ]

    def respond(request: dict) -> Reply:
        if role_of(request) == "sub_agent":
            return Reply(RL.SUB_REPLY)
        return mains.pop(0)

    return respond


def _image(url: str) -> tuple[tuple[int, int], np.ndarray, str]:
    kind, data = url.split(",", 1)
    image = Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")
    small = image.resize((8, 8), Image.Resampling.BOX)
    return image.size, np.asarray(small, dtype=np.int32).reshape(-1), kind


def _frames(trace_call: dict) -> list[int]:
    out = []
    for message in trace_call["messages"]:
        if isinstance(message.get("content"), list):
            for part in message["content"]:
                if part.get("type") == "frames":
                    out += part["indices"]
    return out


def _same_messages(ours: list[dict], ref: list[dict], indices: list[int], at: str) -> None:
    assert [m["role"] for m in ours] == [m["role"] for m in ref], at
    seen = 0
    for mine, theirs in zip(ours, ref, strict=True):
        assert isinstance(mine["content"], list), at
        kinds = [{"image": "image_url"}.get(p["type"], p["type"]) for p in theirs["content"]]
        assert [p["type"] for p in mine["content"]] == kinds, at
        for part, expected in zip(mine["content"], theirs["content"], strict=True):
            if expected["type"] == "text":
                assert part["text"] == expected["text"], at
                continue
            frame = IMAGES[expected["image"]]
            size, pixels, kind = _image(part["image_url"]["url"])
            assert kind == "data:image/png;base64", at  # AReaL sends PNG
            assert size == (frame["width"], frame["height"]), at
            assert indices[seen] == frame["index"], f"{at} image {seen}"
            gap = np.abs(pixels - np.asarray(frame["digest"]))
            assert gap.max() <= PIXEL_TOLERANCE["max"] and gap.mean() <= PIXEL_TOLERANCE["mean"]
            seen += 1


async def _rollout(episode: dict, tmp_path):
    row = RL.RL_ROWS[episode["row"]]
    prompt = paravt_prompts([row], video_root=E.VIDEOS_DIR)[0]
    prefix = RL.RL_RECIPES[episode["recipe"]]["THINK_PREFIX"] == "1"
    context = Context(
        protocol="release-rl",
        think_prefix=prefix,
        temperature=0.7,
        max_new_tokens=2048,
        max_turns=3,
    )
    board = Board(tmp_path / "board.sqlite")
    with ScriptedServer(_responder(episode)) as server:
        async with OpenAIChatModel(server.base_url, model="scripted", max_retries=0) as llm:
            graph = compile_graph(llm, board)
            result = await run_question(
                graph,
                board,
                video_path=prompt.video,
                question=Question(
                    prompt.question, kind=prompt.kind, prompt=prompt.prompt, system=prompt.system
                ),
                context=context,
            )
        requests = list(server.requests)
    board.close()
    return requests, result.trace


@pytest.mark.slow
@pytest.mark.parametrize("episode_id", sorted(EPISODES))
async def test_release_rl_sends_what_the_release_workflow_holds(episode_id, tmp_path):
    episode = EPISODES[episode_id]
    requests, trace = await _rollout(episode, tmp_path)
    calls = {"main": [], "sub_agent": []}
    for call in trace["model_calls"]:
        calls["main" if call["role"] == "main" else "sub_agent"].append(call)
    ours = {"main": [], "sub_agent": []}
    for body in requests:
        ours[role_of(body)].append(body)
    ref = {role: [r for r in episode["requests"] if r["role"] == role] for role in ours}
    assert len(ours["main"]) == len(ref["main"]), episode_id
    assert len(ours["sub_agent"]) == len(ref["sub_agent"]) == episode["sub_agents_ran"]
    for n, (body, theirs) in enumerate(zip(ours["main"], ref["main"], strict=True)):
        at = f"{episode_id} main {n}"
        messages = list(body["messages"])
        if theirs["prefill"]:  # sent as an assistant message the server continues
            assert messages[-1] == {"role": "assistant", "content": theirs["prefill"]}, at
            assert body.get("continue_final_message") is True, at
            messages = messages[:-1]
        else:
            assert messages[-1]["role"] != "assistant", at
        _same_messages(messages, theirs["messages"], _frames(calls["main"][n]), at)
        assert (body["temperature"], body["max_tokens"]) == (0.7, theirs["max_new_tokens"]), at
    by_text = lambda r: r["messages"][0]["content"][-1]["text"]  # noqa: E731
    traced = {by_text(c): _frames(c) for c in calls["sub_agent"]}
    for body, theirs in zip(
        sorted(ours["sub_agent"], key=by_text), sorted(ref["sub_agent"], key=by_text), strict=True
    ):
        at = f"{episode_id} sub-agent {by_text(theirs)[:60]!r}"
        _same_messages(body["messages"], theirs["messages"], traced[by_text(body)], at)
        assert theirs["prefill"] == "" and body["temperature"] == 0.7, at
        assert (body["max_tokens"], theirs["max_new_tokens"]) == (512, 2048), at


def test_the_release_token_stream_drops_the_next_turns_header():
    """After a tool turn the workflow extends its token stream with the re-rendered prompt
    cut at the old stream's length; the Think Prefix sits in the stream but not in the
    rendered assistant message, so the cut lands past the user turn's header. A chat server
    renders whole turns: release-rl sends them (this is recorded, not reproduced)."""
    recorded = EPISODES["rl-paragrpo-rl_mcq-parallel"]["requests"]
    stream = next(r["tokens_after_first_turn"] for r in recorded if "tokens_after_first_turn" in r)
    assert "</tool_call><|im_end|>tool_response>" in stream
    assert "<|im_start|>user\n<tool_response>" not in stream.split("<|im_end|>", 1)[1][:40]
