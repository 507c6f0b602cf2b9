"""Does the served chat template already open the think block?

Qwen3-VL *Thinking* templates end the generation prompt with ``<think>\\n``; the Instruct
ones (and ParaVT-8B's) end it with the assistant header. The Think Prefix must be sent only
to the second kind: SGLang renders the generation prompt and then appends a prefilled
assistant message, so a Thinking template would get ``<think>\\n<think>\\n``.

The probe renders one user message with the generation prompt on the server itself, through
SGLang's ``/v1/tokenize`` + ``/v1/detokenize`` (``text``), or vLLM's root ``/tokenize`` +
``/detokenize`` (``prompt``), and reads how it ends. A server with neither (or that fails)
is taken to leave the turn open, as before.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
import openai

log = logging.getLogger(__name__)

_PROBE = [{"role": "user", "content": "?"}]
_ERRORS = (openai.APIError, httpx.HTTPError, ValueError, KeyError, TypeError)


async def generation_prompt(client: openai.AsyncOpenAI, model: str) -> str | None:
    """The served template's text for one user message plus the generation prompt, or None."""
    root = str(client.base_url).rstrip("/").removesuffix("/v1")
    for base in (str(client.base_url).rstrip("/"), root):  # SGLang: /v1/..., vLLM: /...
        try:
            tokens = await _post(
                client,
                f"{base}/tokenize",
                {"model": model, "messages": _PROBE, "add_generation_prompt": True},
            )
            ids = tokens["tokens"]
            text = await _post(
                client,
                f"{base}/detokenize",
                {"model": model, "tokens": ids, "skip_special_tokens": False},
            )
            rendered = text.get("text", text.get("prompt"))
            if isinstance(rendered, str):
                return rendered
        except _ERRORS as exc:
            log.debug("no template probe at %s: %s", base, exc)
    return None


async def template_opens(client: openai.AsyncOpenAI, model: str, prefill: str) -> bool:
    """True when the served generation prompt already ends with ``prefill``."""
    rendered = await generation_prompt(client, model)
    return rendered is not None and rendered.rstrip().endswith(prefill.rstrip())


async def _post(client: openai.AsyncOpenAI, url: str, body: dict[str, Any]) -> dict[str, Any]:
    raw = await client.post(url, body=body, cast_to=httpx.Response)
    decoded = raw.json()
    if not isinstance(decoded, dict):
        raise ValueError(f"{url} answered {type(decoded).__name__}, not an object")
    return decoded
