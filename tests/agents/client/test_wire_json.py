"""The request body's bytes are exactly what the OpenAI client would have encoded."""

from __future__ import annotations

import base64
import json
import random

from openai._utils._json import openapi_dumps

from agents.client.wire_json import body_bytes


def _url(rng: random.Random, size: int = 4000) -> str:
    return "data:image/jpeg;base64," + base64.b64encode(rng.randbytes(size)).decode("ascii")


def _body(rng: random.Random) -> dict:
    frame = _url(rng)
    parts = [
        {"type": "text", "text": 'the "first" frame, \u00e9t\u00e9 \u2014 \x00img-0 and \\'},
        {"type": "image_url", "image_url": {"url": frame}},
        {"type": "text", "text": "<12.0 seconds>"},
        {"type": "image_url", "image_url": {"url": _url(rng), "detail": "low"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},  # short
        {"type": "image_url", "image_url": {"url": 'https://x/"odd".jpg?' + "q" * 2000}},
        {"type": "image_url", "image_url": {"url": frame}},  # the same frame again
    ]
    return {
        "model": "paravt-nano",
        "messages": [
            {"role": "system", "content": "You answer questions about videos."},
            {"role": "user", "content": parts},
            {"role": "assistant", "content": "<think>\n"},
        ],
        "temperature": 0.7,
        "max_tokens": 256,
        "stop": ["</tool_call>"],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_bytes_match_the_openai_clients_encoding():
    rng = random.Random(7)
    for _ in range(5):
        body = _body(rng)
        assert body_bytes(body) == openapi_dumps(body)
        again = body_bytes(body)  # the URLs' encodings now come from the cache
        assert again == openapi_dumps(body)
        assert json.loads(again) == body


def test_a_body_without_images_or_messages_is_encoded_as_is():
    for body in ({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, {"x": 1}):
        assert body_bytes(body) == openapi_dumps(body)
