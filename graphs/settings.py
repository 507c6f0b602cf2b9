"""Process settings (endpoint, model, databases) from the environment or `.env`."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, fields, replace
from pathlib import Path

from dotenv import dotenv_values

from agents.fleet import EndpointFleet
from agents.llm import OpenAIChatModel

DEFAULT_ENDPOINT = "http://127.0.0.1:30000/v1"


@dataclass(frozen=True)
class Settings:
    endpoint: str = DEFAULT_ENDPOINT  # the first (or only) endpoint
    more_endpoints: tuple[str, ...] = ()  # replicas of the same model (agents.fleet)
    api_key: str = "EMPTY"
    model: str | None = None
    request_timeout: float = 120.0
    home: Path = Path(".paravt")
    board_db: Path | None = None
    checkpoint_db: Path | None = None
    # PostgreSQL for the board and the checkpoints (graphs.stores); never printed whole
    database_url: str | None = dataclasses.field(default=None, repr=False)
    database_retry_s: float = 30.0  # how long an operation waits for the database to return
    media_roots: str = ""  # os.pathsep-separated folders chats may name media under

    @property
    def board_path(self) -> Path:
        return self.board_db or self.home / "board.sqlite"

    @property
    def checkpoint_path(self) -> Path:
        return self.checkpoint_db or self.home / "checkpoints.sqlite"

    @property
    def roots(self) -> tuple[Path, ...]:
        """Where a chat may name its video: ``PARAVT_MEDIA_ROOTS``, else the working folder."""
        named = [Path(p).expanduser() for p in self.media_roots.split(os.pathsep) if p.strip()]
        return tuple(p.resolve() for p in named) or (Path.cwd().resolve(),)

    @property
    def endpoints(self) -> tuple[str, ...]:
        return (self.endpoint, *self.more_endpoints)

    def chat_model(self) -> OpenAIChatModel | EndpointFleet:
        """The OpenAI-compatible client these settings describe: one endpoint's, or a fleet
        of them, each retried once before the fleet tries another."""
        if not self.more_endpoints:
            return OpenAIChatModel(
                self.endpoint, api_key=self.api_key, model=self.model, timeout=self.request_timeout
            )
        return EndpointFleet([
            OpenAIChatModel(url, api_key=self.api_key, model=self.model,
                            timeout=self.request_timeout, max_retries=1)
            for url in self.endpoints
        ])  # fmt: skip

    @classmethod
    def load(cls, env_file: str | Path | None = ".env", **overrides) -> Settings:
        """Defaults < `.env` < environment < explicit overrides (None means "not given")."""
        values: dict[str, str | None] = {}
        if env_file and Path(env_file).is_file():
            values.update(dotenv_values(env_file))
        values.update(os.environ)
        settings = cls()
        for field in fields(cls):
            raw = values.get(f"PARAVT_{field.name.upper()}")
            if raw not in (None, ""):
                settings = replace(settings, **{field.name: _convert(field.name, raw)})
        explicit = {k: v for k, v in overrides.items() if v is not None}
        if isinstance(explicit.get("endpoint"), (list, tuple)):  # --endpoint given N times
            urls = list(explicit.pop("endpoint"))
            explicit.update(endpoint=urls[0], more_endpoints=tuple(urls[1:]))
        settings = replace(settings, **explicit)
        if "," in settings.endpoint:  # PARAVT_ENDPOINT=URL,URL,...
            urls = [u.strip() for u in settings.endpoint.split(",") if u.strip()]
            settings = replace(settings, endpoint=urls[0], more_endpoints=tuple(urls[1:]))
        return settings


def _convert(name: str, raw: str):
    if name in ("home", "board_db", "checkpoint_db"):
        return Path(raw)
    if name in ("request_timeout", "database_retry_s"):
        return float(raw)
    return raw
