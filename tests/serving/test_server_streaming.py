"""The local server streams: over real HTTP on 127.0.0.1 with the tiny model, read by raw SSE
parsing, by the official `openai` client and by `OpenAIChatModel`."""

from __future__ import annotations

import base64
import io
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.tiny_server import tiny_server

os.environ.setdefault("HF_HUB_OFFLINE", "1")

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")

from agents.client.llm import OpenAIChatModel  # noqa: E402
from agents.requests import ModelRequest, SamplingParams  # noqa: E402
from serving.detokenize import TextPieces, reply_text  # noqa: E402

pytestmark = pytest.mark.integration

TEXT_ONLY = [{"role": "user", "content": "What happens in the video? Describe it."}]


def _frames(text: str = "What happens?") -> list[dict[str, Any]]:
    buffer = io.BytesIO()
    Image.new("RGB", (224, 224), (200, 40, 90)).save(buffer, "JPEG")
    url = "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()
    content = [
        {"type": "text", "text": "<0.0 seconds>"},
        {"type": "image_url", "image_url": {"url": url}},
        {"type": "text", "text": text},
    ]
    return [{"role": "user", "content": content}]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def server(cache_dir, tmp_path_factory):
    """The tiny model served on a free port; an httpx client on its /v1."""
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    with tiny_server(cache_dir, log_path, timeout=120.0) as client:
        yield client


@pytest.fixture(scope="module")
def tokenizer(server, cache_dir):
    return transformers.AutoTokenizer.from_pretrained(cache_dir / "paravt" / "tiny-qwen3vl-seed0")


def _plain(server, **body) -> dict[str, Any]:
    response = server.post("/chat/completions", json={"model": "tiny", **body})
    assert response.status_code == 200, response.text
    return response.json()


def _stream(server, **body) -> list[dict[str, Any] | str]:
    """Every event's data of a streamed request, parsed (``"[DONE]"`` as the string)."""
    body = {"model": "tiny", "stream": True, **body}
    with server.stream("POST", "/chat/completions", json=body) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        data = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    return [d if d == "[DONE]" else json.loads(d) for d in data]


def _content(events: list[Any]) -> list[str]:
    deltas = [c["choices"][0]["delta"].get("content") for c in events[1:-1] if c["choices"]]
    return [d for d in deltas if d]


@pytest.mark.parametrize(
    "request_",
    [
        {"messages": _frames(), "temperature": 0, "max_tokens": 24},
        {"messages": TEXT_ONLY, "temperature": 1.0, "seed": 5, "max_tokens": 160},
        {
            "messages": TEXT_ONLY,
            "temperature": 1.0,
            "seed": 6,
            "max_tokens": 96,
            "skip_special_tokens": True,
        },
    ],
)
def test_streamed_text_and_usage_equal_the_unstreamed(server, request_):
    plain = _plain(server, **request_)
    events = _stream(server, stream_options={"include_usage": True}, **request_)
    first, *_, finish, usage, done = events
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    deltas = _content(events)
    assert len(deltas) >= 2, events  # token by token, not one piece
    assert "".join(deltas) == plain["choices"][0]["message"]["content"]
    assert finish["choices"][0]["finish_reason"] == plain["choices"][0]["finish_reason"]
    assert usage["choices"] == [] and usage["usage"] == plain["usage"]
    assert done == "[DONE]"
    assert {e["object"] for e in events[:-1]} == {"chat.completion.chunk"}
    assert len({e["id"] for e in events[:-1]}) == 1


def test_a_stop_string_cuts_the_stream_where_it_cuts_the_text(server):
    request = {"messages": TEXT_ONLY, "temperature": 1.0, "seed": 3, "max_tokens": 48}
    full = _plain(server, **request)["choices"][0]["message"]["content"]
    stop = next((full[i : i + 3] for i in range(8, len(full) - 3) if full[i : i + 3].strip()), "")
    assert stop, f"sampled text too short to pick a stop string from: {full!r}"
    events = _stream(server, stop=[stop], **request)
    assert "".join(_content(events)) == full[: full.index(stop)]
    assert events[-2]["choices"][0]["finish_reason"] == "stop"
    assert all("usage" not in e for e in events[:-1])  # not asked for


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"logprobs": True}, "stream"),
        ({"return_token_ids": True}, "stream"),
        ({"max_tokens": 10**6}, "context"),
    ],
)
def test_errors_before_generation_are_plain_400s(server, change, expected):
    body = {"model": "tiny", "messages": TEXT_ONLY, "stream": True, **change}
    response = server.post("/chat/completions", json=body)
    assert response.status_code == 400, response.text
    assert expected in response.json()["error"]["message"]


def test_a_client_that_leaves_stops_the_generation(server):
    body = {"model": "tiny", "messages": TEXT_ONLY, "stream": True, "max_tokens": 4000}
    body |= {"temperature": 1.0, "seed": 1}
    with server.stream("POST", "/chat/completions", json=body) as response:
        lines = response.iter_lines()
        assert [next(lines).startswith("data: ") for _ in range(5)] == [True, False] * 2 + [True]
    deadline = time.monotonic() + 60  # a guard only: without the stop this never logs
    while "the client left; generation stopped" not in server.log_path.read_text():
        assert time.monotonic() < deadline, server.log_path.read_text()[-2000:]
        time.sleep(0.1)
    assert _plain(server, messages=TEXT_ONLY, max_tokens=2)["usage"]["completion_tokens"] == 2


def test_the_openai_client_reads_every_chunk(server):
    openai = pytest.importorskip("openai")
    request = {"messages": _frames("Describe."), "temperature": 1.0, "seed": 9, "max_tokens": 40}
    plain = _plain(server, **request)
    client = openai.OpenAI(base_url=str(server.base_url), api_key="unused")
    stream = client.chat.completions.create(
        model="tiny", stream=True, stream_options={"include_usage": True}, **request
    )
    chunks = list(stream)
    assert all(isinstance(c, openai.types.chat.ChatCompletionChunk) for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain["choices"][0]["message"]["content"]
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert [f for f in finishes if f] == [plain["choices"][0]["finish_reason"]]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == plain["usage"]["completion_tokens"]
    assert chunks[-1].usage.prompt_tokens_details.model_dump()["image_tokens"] == 49


async def test_our_client_streams_what_it_would_get_unstreamed(server):
    params = SamplingParams(temperature=1.0, seed=11, max_tokens=48)
    request = ModelRequest(role="main", messages=_frames(), params=params)
    deltas: list[str] = []
    async with OpenAIChatModel(str(server.base_url), model="tiny", timeout=120) as llm:
        plain = await llm.complete(request)
        live = await llm.complete(request, on_text=deltas.append)
    assert len(deltas) >= 2 and "".join(deltas) == live.text == plain.text
    assert (live.usage, live.finish_reason) == (plain.usage, plain.finish_reason)
    assert live.usage.image_tokens == 49


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("stops", [(), ("€ 😀",), ("ab", "abcd"), ("<|im_end|>",)])
def test_text_pieces_hold_back_half_characters_and_stop_prefixes(tokenizer, stops, skip):
    end_ids = [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    ids = tokenizer("héllo wörld € 😀 abcd 漢字 done", add_special_tokens=False)["input_ids"]
    ids += end_ids
    partial = [tokenizer.decode(ids[:k]) for k in range(1, len(ids))]
    assert any(text.endswith("\ufffd") for text in partial), "no character split over tokens"
    pieces: list[str] = []
    stream = TextPieces(tokenizer, pieces.append, end_ids, stops, skip_special_tokens=skip)
    stream.put(torch.tensor([[1, 2, 3]]))  # generate puts the prompt first
    fed: list[int] = []
    for token in ids:
        fed.append(token)
        stream.put(torch.tensor([token]))
        if any(s in tokenizer.decode(fed) for s in stops):
            break  # where generate's stop criterion ends it
    final, _, _ = reply_text(tokenizer, fed, end_ids, stops, skip_special_tokens=skip)
    stream.flush(final)
    assert "".join(pieces) == final and len(pieces) >= 2
    assert not any("\ufffd" in piece for piece in pieces)
    assert not any(s and s in "".join(pieces) for s in stops)
