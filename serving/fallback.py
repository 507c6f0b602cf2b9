"""The endpoint a command runs on: the configured one, checked before anything is decoded, or,
with none configured and nothing answering at the default, paravt-nano on a local CPU server
for the life of the command (`app.py run` and `app.py demo`)."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from agents.client.completion import EndpointError
from agents.client.llm import OpenAIChatModel
from serving.checkpoints import default_checkpoint
from serving.launch import local_server

log = logging.getLogger(__name__)

#: How long the one quick try at an unconfigured default endpoint waits for an answer.
PROBE_TIMEOUT_S = 2.0


async def answers(endpoint: str, *, api_key: str) -> bool:
    """Whether anything answers at ``endpoint`` at all: one quick try at its model list, with
    the key (a server that refuses it still answers)."""
    probe = OpenAIChatModel(endpoint, api_key=api_key, timeout=PROBE_TIMEOUT_S, max_retries=0)
    async with probe:
        try:
            await probe.served_entry()
        except EndpointError as exc:
            return exc.kind not in ("connection", "timeout")
    return True


async def check(endpoint: str, *, api_key: str, timeout: float) -> None:
    """The endpoint's model list, retried as every request is; EndpointError if it fails."""
    async with OpenAIChatModel(endpoint, api_key=api_key, timeout=timeout) as llm:
        await llm.served_entry()


@contextlib.contextmanager
def endpoint_or_local(
    endpoint: str,
    *,
    api_key: str,
    timeout: float,
    configured: bool,
    log_path: Path,
    run: Callable,
    say: Callable[[str], None],
) -> Iterator[str]:
    """The base URL to use for the block. A ``configured`` endpoint (a flag, the environment
    or `.env` named it) is checked and used, an EndpointError if it fails; otherwise the
    default is tried once, and if nothing answers there a local paravt-nano server runs for
    the block, announced in one line through ``say``. ``run`` runs a coroutine to its end
    (the command's event loop)."""
    if configured or run(answers(endpoint, api_key=api_key)):
        run(check(endpoint, api_key=api_key, timeout=timeout))
        yield endpoint
        return
    nano = default_checkpoint()
    model = os.path.relpath(nano) if nano else "the untrained tiny model (no paravt-nano)"
    say(
        f"no endpoint configured and no server at {endpoint}: starting the local CPU server "
        f"on {model} for this command"
    )
    with local_server(log_path=log_path) as url:
        log.info("local server ready at %s", url)
        yield url
