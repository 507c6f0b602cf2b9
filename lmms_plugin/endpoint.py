"""The endpoint a paravt model object talks to: `base_url`, or paravt-nano on a local CPU
server (serving.launch, as `app.py demo` starts it) from its first request to its close."""

from __future__ import annotations

import contextlib
import hashlib
import logging

import httpx

from agents.client.completion import MalformedResponse, first_model_id
from lmms_plugin.model_args import PluginArgs
from serving.checkpoints import NANO_DIR, default_checkpoint
from serving.launch import local_server

log = logging.getLogger(__name__)


class Endpoint:
    """Where requests go; the local server, when there is one, runs until `close`."""

    def __init__(self, args: PluginArgs):
        self.args = args
        self._stack: contextlib.ExitStack | None = None
        self._url: str | None = None

    @property
    def local(self) -> bool:
        return self.args.base_url is None

    def url(self) -> str:
        """The base URL, starting the local server on the first call that needs it."""
        if not self.local:
            return str(self.args.base_url)
        if self._url is None:
            checkpoint = default_checkpoint()
            log.warning(
                "no base_url in --model_args: starting the local CPU server on %s",
                checkpoint or "the untrained tiny model (no paravt-nano)",
            )
            stack = contextlib.ExitStack()
            self._url = stack.enter_context(local_server(log_path=self.args.home / "server.log"))
            self._stack = stack
            log.warning("local server ready at %s", self._url)
        return self._url

    def identity(self) -> str:
        """What names the model before anything runs: the model named in --model_args, the
        local checkpoint (its path and files), or the first model the endpoint serves."""
        if self.args.model:
            return self.args.model
        if self.local:
            checkpoint = default_checkpoint()
            if checkpoint is None:
                return "local:tiny-untrained"
            stats = sorted(
                (p.name, p.stat().st_size, p.stat().st_mtime_ns)
                for p in checkpoint.iterdir()
                if p.is_file()
            )
            digest = hashlib.sha256(repr(stats).encode()).hexdigest()[:12]
            return f"local:{checkpoint.relative_to(NANO_DIR.parent)}@{digest}"
        try:
            response = httpx.get(str(self.args.base_url).rstrip("/") + "/models", timeout=5)
            response.raise_for_status()
            return first_model_id(response.json())
        except (httpx.HTTPError, ValueError, MalformedResponse) as exc:
            log.info("no model name from %s: %s", self.args.base_url, exc)
            return f"unknown@{self.args.base_url}"  # matches no earlier reply: all run again

    def close(self) -> None:
        if self._stack is not None:
            self._stack.close()
        self._stack, self._url = None, None
