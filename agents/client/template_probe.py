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
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

_PROBE = [{"role": "user", "content": "?"}]

Post = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""POST a JSON body to a URL and return the decoded JSON (the client's own transport)."""


async def generation_prompt(post: Post, base_url: str, model: str) -> str | None:
    """The served template's text for one user message plus the generation prompt, or None."""
    base_url = base_url.rstrip("/")
    for base in (base_url, base_url.removesuffix("/v1")):  # SGLang: /v1/..., vLLM: /...
        try:
            body = {"model": model, "messages": _PROBE, "add_generation_prompt": True}
            tokens = (await post(f"{base}/tokenize", body))["tokens"]
            body = {"model": model, "tokens": tokens, "skip_special_tokens": False}
            text = await post(f"{base}/detokenize", body)
            rendered = text.get("text", text.get("prompt"))
            if isinstance(rendered, str):
                return rendered
        except Exception as exc:  # a 404, a refusal, a body of another shape: no probe there
            log.debug("no template probe at %s: %s", base, exc)
    return None


async def template_opens(post: Post, base_url: str, model: str, prefill: str) -> bool:
    """True when the served generation prompt already ends with ``prefill``."""
    rendered = await generation_prompt(post, base_url, model)
    return rendered is not None and rendered.rstrip().endswith(prefill.rstrip())
