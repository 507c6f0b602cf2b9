"""The local server's streamed completions: generation in a thread, each piece sent as SSE.

`serving.server` hands `stream_completion` a blocking ``generate(on_text)``; the response's
status waits for the first piece, so a request error before generation is still a plain 400
(and a failure a 500), while a failure after it is an error event that ends the stream. A
client that disconnects stops the generation at its next token.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi.responses import StreamingResponse

from serving.engine import Completion, Prompt
from serving.sse import CONTENT_TYPE, DONE, ChunkStream

logger = logging.getLogger("serving.server")

Generate = Callable[[Callable[[str], None]], tuple[Prompt, Completion]]


class _ClientGone(Exception):
    """Raised in the generation thread once the streaming client has disconnected."""


def usage_of(prompt: Prompt, done: Completion) -> dict[str, Any]:
    """A chat completion's ``usage``, streamed or not."""
    return {
        "prompt_tokens": len(prompt.input_ids),
        "completion_tokens": len(done.token_ids),
        "total_tokens": len(prompt.input_ids) + len(done.token_ids),
        "prompt_tokens_details": {"image_tokens": prompt.image_tokens, "cached_tokens": 0},
    }


def log_done(prompt: Prompt, done: Completion, began: float) -> None:
    logger.info(
        "chat: %d prompt (%d image) + %d completion tokens in %.2fs",
        len(prompt.input_ids),
        prompt.image_tokens,
        len(done.token_ids),
        time.perf_counter() - began,
    )


async def stream_completion(generate: Generate, chunks: ChunkStream) -> StreamingResponse:
    """Run ``generate`` in a thread; answer with its pieces as SSE chunks as they come."""
    began = time.perf_counter()
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    gone = threading.Event()

    def put(kind: str, value: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

    def on_text(piece: str) -> None:
        if gone.is_set():
            raise _ClientGone  # stops generate, freeing the model for the next request
        put("text", piece)

    def work() -> None:
        try:
            result = generate(on_text)
        except _ClientGone:
            logger.info("chat stream: the client left; generation stopped")
        except Exception as exc:  # reported below: as the status, or as an error event
            put("error", exc)
        else:
            put("done", result)

    loop.run_in_executor(None, work)
    first = await queue.get()
    if first[0] == "error":
        raise first[1]  # the app's handlers answer 400 (RequestError) or 500

    async def events() -> AsyncIterator[bytes]:
        try:
            yield chunks.start()
            kind, value = first
            while kind == "text":
                yield chunks.text(value)
                kind, value = await queue.get()
            if kind == "error":
                logger.error("chat stream failed after it began", exc_info=value)
                yield chunks.error(f"internal error: {type(value).__name__}: {value}")
                return
            prompt, done = value
            yield chunks.finish(done.finish_reason)
            if chunks.include_usage:
                yield chunks.usage(usage_of(prompt, done))
            yield DONE
            log_done(prompt, done, began)
        finally:
            gone.set()

    headers = {"Cache-Control": "no-cache"}
    return StreamingResponse(events(), media_type=CONTENT_TYPE, headers=headers)
