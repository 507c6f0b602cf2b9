"""A prepared request sends without decoding; the eval's request limit decodes frames before a
request takes its place at the endpoint, never while holding one."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agents import prompts
from agents.client.completion import Completion, Usage
from agents.media import frame_store
from agents.requests import ModelRequest
from evals.runner import RequestLimit


def with_frames(path: str, times=(5.0, 15.0)) -> ModelRequest:
    frames = prompts.frames_part(path, times, 4096)
    content = [prompts.text_part("Which colour?"), frames]
    return ModelRequest(role="main", messages=[{"role": "user", "content": content}])


def images(messages) -> list[str]:
    parts = [p for m in messages if isinstance(m["content"], list) for p in m["content"]]
    return [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]


def test_a_prepared_request_sends_its_frames_without_decoding_again(needle_video, tmp_path):
    copy = tmp_path / "copy.mp4"
    copy.write_bytes(Path(needle_video.path).read_bytes())
    request = with_frames(str(copy))
    text_only = ModelRequest(role="main", messages=[{"role": "user", "content": "Hi?"}])
    assert text_only.ready and not request.ready
    fresh = request.wire()
    request.prepare()
    assert request.ready
    copy.unlink()  # nothing left to decode: the kept messages are sent
    frame_store.FRAME_CACHE.clear_memory()
    sent = request.wire()
    assert sent == fresh and len(images(sent)) == 2
    sent.append({"role": "assistant", "content": "<think>\n"})  # a caller's own list
    assert request.wire() == fresh


class Blocking:
    """A ChatModel that holds each request until released, noting what it was sent."""

    def __init__(self) -> None:
        self.seen: list[ModelRequest] = []
        self.release = asyncio.Event()

    async def complete(self, request: ModelRequest, **_) -> Completion:
        self.seen.append(request)
        await self.release.wait()
        return Completion("ok", "stop", Usage(1, 1), 0.0, "m", 1)


async def test_frames_are_decoded_before_a_request_takes_a_place(needle_video):
    model = Blocking()
    limit = RequestLimit(model, 1)
    first, second = with_frames(needle_video.path), with_frames(needle_video.path, (40.0,))
    one = asyncio.create_task(limit.complete(first))
    while not model.seen:
        await asyncio.sleep(0.01)
    two = asyncio.create_task(limit.complete(second))
    for _ in range(500):  # the second decodes while the first holds the only place
        if second.ready:
            break
        await asyncio.sleep(0.01)
    assert second.ready and model.seen == [first]
    model.release.set()
    assert [c.text for c in await asyncio.gather(one, two)] == ["ok", "ok"]
    assert model.seen == [first, second] and first.ready
