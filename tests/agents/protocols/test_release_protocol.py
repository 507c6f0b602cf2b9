"""``release-eval`` builds the requests the ParaVT release's own driver builds.

`tests/data/release_protocol/eval_requests.json` holds what EvolvingLMMs-Lab/ParaVT@cf55249's
``eval_one`` sent on 62 episodes (tests/parity/record_release_requests.py ran it, with the real
qwen-vl-utils). Here each episode runs through this project, ``app.py eval run``'s code path
(`evals.runner.evaluate`), against a real HTTP server that answers with the same scripted
replies and records every request. Asserted per request: roles, message order and every text
part verbatim; ``max_tokens`` and ``temperature``; the number of images, each image's size
and frame index exactly; pixels within PIXEL_TOLERANCE; and per episode the prediction, score
and tool-call count.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from agents.client.llm import OpenAIChatModel
from evals.runner import evaluate
from evals.spec import EvalSpec
from evals.tasks import get_task
from graphs.context import Context
from graphs.store.sqlite_board import Board
from testing.scripted import ScriptedServer
from tests.parity import release_episodes as E
from tests.support.release import PIXEL_TOLERANCE

RECORDED = json.loads((E.DATA / "eval_requests.json").read_text())
IMAGES = RECORDED["images"]
EPISODES = {e["id"]: e for e in RECORDED["episodes"]}


def _digest(url: str) -> tuple[tuple[int, int], np.ndarray]:
    jpeg = base64.b64decode(url.split(",", 1)[1])
    image = Image.open(io.BytesIO(jpeg)).convert("RGB")
    small = image.resize((8, 8), Image.Resampling.BOX)
    return image.size, np.asarray(small, dtype=np.int32).reshape(-1)


def _frame_indices(trace_call: dict) -> list[int]:
    out = []
    for message in trace_call["messages"]:
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part.get("type") == "frames":
                    out += part["indices"]
    return out


def _compare_request(ours: dict, ref: dict, indices: list[int], where: str) -> int:
    """Assert one request equals the release's; returns how many images it compared."""
    assert ours.get("max_tokens") == ref["max_tokens"], where
    assert ours.get("temperature") == ref["temperature"], where
    assert [m["role"] for m in ours["messages"]] == [m["role"] for m in ref["messages"]], where
    images = 0
    for n, (mine, theirs) in enumerate(zip(ours["messages"], ref["messages"], strict=True)):
        at = f"{where} message {n}"
        if isinstance(theirs["content"], str):
            assert mine["content"] == theirs["content"], at
            continue
        assert isinstance(mine["content"], list), at
        assert [p["type"] for p in mine["content"]] == [
            {"image": "image_url"}.get(p["type"], p["type"]) for p in theirs["content"]
        ], at
        for part, expected in zip(mine["content"], theirs["content"], strict=True):
            if expected["type"] == "text":
                assert part["text"] == expected["text"], at
            elif expected["type"] == "video_url":
                url = part["video_url"]["url"]
                assert url.startswith("file:///") and url.endswith("/" + expected["file"]), at
            else:
                frame = IMAGES[expected["image"]]
                size, pixels = _digest(part["image_url"]["url"])
                assert size == (frame["width"], frame["height"]), at
                assert indices[images] == frame["index"], f"{at} image {images}"
                gap = np.abs(pixels - np.asarray(frame["digest"]))
                assert gap.max() <= PIXEL_TOLERANCE["max"], f"{at} image {images}: {gap.max()}"
                assert gap.mean() <= PIXEL_TOLERANCE["mean"], f"{at} image {images}"
                images += 1
    return images


async def _run_episode(episode: dict, tmp: Path) -> tuple[list[dict], dict, dict]:
    task_name, data_dir, options = E.project_layout(tmp, episode["dataset"], episode["item"])
    task = get_task(task_name)
    agentic = episode["mode"].startswith("agentic_")
    context = Context(
        protocol="release-eval",
        prompt_mode=episode["mode"],
        video_channel=episode["channel"],
        overview_frames=64,
        max_turns=3 if agentic else 1,
        max_parallel=5,
        max_new_tokens=2048,
    )
    spec = EvalSpec(task_name, str(data_dir), "scripted", asdict(context), options)
    with ScriptedServer(E.script(episode["script"], episode["item"])) as server:
        async with OpenAIChatModel(server.base_url, model="scripted", max_retries=0) as llm:
            outcome = await evaluate(
                task, spec, llm=llm, out_root=tmp / "runs", profile="paravt", concurrency=1
            )
        requests = list(server.requests)
    lines = [json.loads(x) for x in (outcome.folder / "samples.jsonl").read_text().splitlines()]
    board = Board(outcome.folder / "board.sqlite")
    try:
        trace = board.trace(lines[-1]["trace_id"]) or {}
    finally:
        board.close()
    return requests, lines[-1], trace


@pytest.mark.slow
@pytest.mark.parametrize("episode_id", sorted(EPISODES))
async def test_release_eval_sends_what_the_release_sends(episode_id, tmp_path):
    episode = EPISODES[episode_id]
    requests, record, trace = await _run_episode(episode, tmp_path)
    ref_requests = episode["requests"]
    assert len(requests) == len(ref_requests), episode_id
    main_calls = [c for c in trace.get("model_calls", []) if c["role"] == "main"]
    for n, (ours, ref) in enumerate(zip(requests, ref_requests, strict=True)):
        indices = _frame_indices(main_calls[n]) if n < len(main_calls) else []
        _compare_request(ours, ref, indices, f"{episode_id} request {n}")
    result = episode["result"]
    if "error" in result:  # the release fails the sample; so does this project, unscored
        assert record["status"] == "error", episode_id
        return
    assert record["status"] == "ok", record.get("error")
    assert record["metrics"]["score"] == pytest.approx(result["score"]), episode_id
    pred = record["extracted"]
    if isinstance(pred, list):  # a grounding answer: the driver writes the pair as "S.S-E.E"
        pred = f"{pred[0]:.1f}-{pred[1]:.1f}"
    assert pred == result["pred"], episode_id
    assert len(trace["tool_calls"]) == result["tool_calls"], episode_id
