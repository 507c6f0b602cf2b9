"""The local OpenAI-compatible server, over real HTTP on 127.0.0.1, with the tiny model."""

from __future__ import annotations

import base64
import io
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.support.tiny_server import tiny_server

os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")

pytestmark = pytest.mark.integration

PREFILL = "<think>\n"


def _data_url(color: tuple[int, int, int], size: tuple[int, int] = (224, 224)) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "JPEG")
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()


def _frames_message(text: str, n: int = 2) -> dict:
    content = []
    for i in range(n):
        content.append({"type": "text", "text": f"<{12.5 * i:.1f} seconds>"})
        image = _data_url((40 * i, 200 - 40 * i, 90))
        content.append({"type": "image_url", "image_url": {"url": image}})
    content.append({"type": "text", "text": text})
    return {"role": "user", "content": content}


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def server(cache_dir, tmp_path_factory):
    """The tiny model served on a free port; an httpx client on its /v1."""
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    with tiny_server(cache_dir, log_path, timeout=60.0) as client:
        yield client


@pytest.fixture(scope="module")
def model_dir(server, cache_dir) -> Path:
    """The checkpoint the server built into its cache (and logged)."""
    path = cache_dir / "paravt" / "tiny-qwen3vl-seed0"
    assert (path / "config.json").exists()
    return path


@pytest.fixture(scope="module")
def tokenizer(model_dir):
    return transformers.AutoTokenizer.from_pretrained(model_dir)


def _chat(server, **body) -> dict:
    response = server.post("/chat/completions", json={"model": "tiny", **body})
    assert response.status_code == 200, response.text
    return response.json()


def test_models_and_health(server):
    models = server.get("/models").json()
    assert models["object"] == "list"
    assert [m["id"] for m in models["data"]] == ["tiny"]


def test_images_and_text_give_an_openai_shaped_body(server):
    body = _chat(server, messages=[_frames_message("What happens?")], max_tokens=8)
    assert body["id"].startswith("chatcmpl-")
    assert body["object"] == "chat.completion"
    assert isinstance(body["created"], int)
    assert body["model"] == "tiny"
    (choice,) = body["choices"]
    assert choice["index"] == 0
    assert choice["message"]["role"] == "assistant"
    assert isinstance(choice["message"]["content"], str)
    assert choice["finish_reason"] in ("stop", "length")
    usage = body["usage"]
    assert usage["prompt_tokens"] > 0
    assert usage["completion_tokens"] >= 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["prompt_tokens_details"]["image_tokens"] == 2 * 49  # two 224x224 frames


@pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
def test_max_tokens_is_respected(server, field):
    body = _chat(server, messages=[{"role": "user", "content": "Hi"}], **{field: 3})
    assert body["usage"]["completion_tokens"] <= 3


def test_logprobs_one_per_generated_token(server):
    body = _chat(
        server,
        messages=[_frames_message("Describe.")],
        max_tokens=6,
        logprobs=True,
        top_logprobs=2,
        return_token_ids=True,
    )
    (choice,) = body["choices"]
    entries = choice["logprobs"]["content"]
    assert len(entries) == body["usage"]["completion_tokens"] == len(choice["token_ids"])
    for entry in entries:
        assert isinstance(entry["token"], str)
        assert entry["logprob"] <= 0.0
        assert entry["bytes"] is None
        assert len(entry["top_logprobs"]) == 2


def test_token_ids_decode_back_to_the_prompt(server, tokenizer):
    body = _chat(
        server,
        messages=[_frames_message("Where is the red ball?")],
        max_tokens=4,
        return_token_ids=True,
    )
    prompt_ids = body["prompt_token_ids"]
    assert len(prompt_ids) == body["usage"]["prompt_tokens"]
    assert len(body["choices"][0]["token_ids"]) == body["usage"]["completion_tokens"]
    prompt = tokenizer.decode(prompt_ids, skip_special_tokens=False)
    assert "Where is the red ball?" in prompt
    assert "<12.5 seconds><|vision_start|><|image_pad|>" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


def test_continue_final_message_keeps_the_prefill(server, tokenizer):
    body = _chat(
        server,
        messages=[
            {"role": "user", "content": "Question?"},
            {"role": "assistant", "content": PREFILL},
        ],
        max_tokens=4,
        continue_final_message=True,
        add_generation_prompt=False,
        return_token_ids=True,
    )
    prompt = tokenizer.decode(body["prompt_token_ids"], skip_special_tokens=False)
    assert prompt.endswith("<|im_start|>assistant\n" + PREFILL)
    assert prompt.count("<|im_start|>assistant") == 1


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"image": "data:image/jpeg;base64,bm90IGFuIGltYWdl"}, "decodable"),
        ({"image": "data:image/png;base64,***"}, "decodable"),
        ({"image": "https://example.com/frame.jpg"}, "data URL"),
        ({"n": 2}, "n=1"),
        ({"temperature": -1}, "temperature"),
        ({"stream": True, "logprobs": True}, "stream"),
        ({"max_tokens": 10**6}, "context"),
        ({"frequency_penalty": 0.5}, "frequency_penalty"),
        ({"continue_final_message": True, "add_generation_prompt": True}, "add_generation_prompt"),
    ],
)
def test_bad_requests_get_a_400_with_a_message(server, change, expected):
    image = change.pop("image", _data_url((1, 2, 3)))
    content = [{"type": "image_url", "image_url": {"url": image}}, {"type": "text", "text": "?"}]
    body = {"model": "tiny", "messages": [{"role": "user", "content": content}], **change}
    response = server.post("/chat/completions", json=body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert expected in error["message"]
    assert error["type"] == "invalid_request_error"


def test_a_huge_valid_image_is_refused_with_a_400_before_it_is_decoded(server):
    buffer = io.BytesIO()
    Image.new("1", (9000, 9000)).save(buffer, "PNG")  # valid, small on the wire
    url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    content = [{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": "?"}]
    response = server.post(
        "/chat/completions", json={"messages": [{"role": "user", "content": content}]}
    )
    assert response.status_code == 400, response.text
    assert "9000x9000" in response.json()["error"]["message"]
    assert server.get("/models").status_code == 200, "the server still serves"


def test_greedy_is_deterministic_and_seeded_sampling_repeats(server):
    text_only = {"messages": [{"role": "user", "content": "Count the cups."}], "max_tokens": 12}
    greedy = _chat(server, temperature=0, return_token_ids=True, **text_only)
    _chat(server, messages=[_frames_message("In between")], max_tokens=4)  # vision state
    again = _chat(server, temperature=0, return_token_ids=True, **text_only)
    assert greedy["choices"][0]["token_ids"] == again["choices"][0]["token_ids"]
    assert greedy["choices"][0]["message"] == again["choices"][0]["message"]
    sampled = [
        _chat(server, temperature=1.0, seed=7, return_token_ids=True, **text_only) for _ in range(2)
    ]
    assert sampled[0]["choices"][0]["token_ids"] == sampled[1]["choices"][0]["token_ids"]


def test_stop_string_cuts_the_text(server):
    request = {"messages": [{"role": "user", "content": "Go on."}], "temperature": 1.0, "seed": 3}
    full = _chat(server, max_tokens=24, **request)["choices"][0]["message"]["content"]
    stop = next((full[i : i + 3] for i in range(4, len(full) - 3) if full[i : i + 3].strip()), "")
    assert stop, f"sampled text too short to pick a stop string from: {full!r}"
    cut = _chat(server, max_tokens=24, stop=[stop], **request)["choices"][0]
    assert cut["message"]["content"] == full[: full.index(stop)]
    assert cut["finish_reason"] == "stop"


def test_health_answers_while_generating(server):
    long_request = {
        "messages": [{"role": "user", "content": "Talk."}],
        "max_tokens": 800,
        "temperature": 1.0,
        "seed": 11,
    }
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(server.post, "/chat/completions", json=long_request)
        time.sleep(0.3)
        started = time.perf_counter()
        health = httpx.get(str(server.base_url).removesuffix("/v1/") + "/health", timeout=5)
        waited = time.perf_counter() - started
        still_generating = not pending.done()
        completion = pending.result().json()
    assert health.status_code == 200
    assert waited < 1.0
    assert still_generating or completion["usage"]["completion_tokens"] < 800


def test_openai_sdk_parses_the_response(server):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=str(server.base_url), api_key="unused")
    completion = client.chat.completions.create(
        model="tiny",
        messages=[_frames_message("What happens?", n=1)],
        max_tokens=4,
        logprobs=True,
        extra_body={"return_token_ids": True},
    )
    assert completion.usage.prompt_tokens_details is not None
    assert completion.choices[0].logprobs is not None
    assert len(completion.choices[0].logprobs.content) == completion.usage.completion_tokens
