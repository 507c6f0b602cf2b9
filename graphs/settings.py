"""Process settings (endpoint, model, databases) from the environment or `.env`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from dotenv import dotenv_values

from agents.client.fleet import EndpointFleet
from agents.client.llm import OpenAIChatModel
from agents.client.redact import Redactor, redact_url, url_secrets

DEFAULT_ENDPOINT = "http://127.0.0.1:30000/v1"
#: Settings-file and environment names whose values are credentials wherever they sit.
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.I)


@dataclass(frozen=True)
class Settings:
    endpoint: str = DEFAULT_ENDPOINT  # the first (or only) endpoint
    more_endpoints: tuple[str, ...] = ()  # replicas of the same model (agents.client.fleet)
    api_key: str = field(default="EMPTY", repr=False)
    model: str | None = None
    request_timeout: float = 120.0
    home: Path = Path(".paravt")
    board_db: Path | None = None
    checkpoint_db: Path | None = None
    # PostgreSQL for the board and the checkpoints (graphs.store.stores); never printed whole
    database_url: str | None = field(default=None, repr=False)
    database_retry_s: float = 30.0  # how long an operation waits for the database to return
    media_roots: str = ""  # os.pathsep-separated folders chats may name media under
    # whether a flag, the environment or `.env` named the endpoint (not a setting itself)
    endpoint_configured: bool = field(default=False, metadata={"derived": True})
    # credentials seen while loading, masked wherever anything is shown (not a setting)
    secrets: frozenset[str] = field(
        default=frozenset(), repr=False, compare=False, metadata={"derived": True}
    )

    def __repr__(self) -> str:
        shown = {f.name: getattr(self, f.name) for f in fields(self) if f.repr}
        shown["endpoint"] = redact_url(self.endpoint)
        return f"Settings({', '.join(f'{k}={v!r}' for k, v in shown.items())})"

    @property
    def shown_endpoint(self) -> str:
        """The endpoint as it may be printed: a password in it masked (``user:***@``)."""
        return redact_url(self.endpoint)

    @property
    def redact(self) -> Redactor:
        """Masks every credential these settings know of (`agents.client.redact`)."""
        urls = (self.endpoint, *self.more_endpoints, self.database_url or "")
        return Redactor(
            [self.api_key, *(s for url in urls for s in url_secrets(url)), *self.secrets]
        )

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
        return EndpointFleet(
            [
                OpenAIChatModel(
                    url,
                    api_key=self.api_key,
                    model=self.model,
                    timeout=self.request_timeout,
                    max_retries=1,
                )
                for url in self.endpoints
            ]
        )

    @classmethod
    def load(cls, env_file: str | Path | None = ".env", **overrides) -> Settings:
        """Defaults < `.env` < environment < explicit overrides (None means "not given")."""
        dotenv: dict[str, str | None] = {}
        if env_file and Path(env_file).is_file():
            dotenv = dict(dotenv_values(env_file))
        values = {**dotenv, **os.environ}
        settings = cls()
        for setting in fields(cls):
            if setting.metadata.get("derived"):
                continue
            raw = values.get(f"PARAVT_{setting.name.upper()}")
            if raw not in (None, ""):
                settings = replace(settings, **{setting.name: _convert(setting.name, raw)})
        explicit = {k: v for k, v in overrides.items() if v is not None}
        configured = "endpoint" in explicit or values.get("PARAVT_ENDPOINT") not in (None, "")
        secrets = _secrets(dotenv, os.environ, explicit.get("endpoint"))
        if isinstance(explicit.get("endpoint"), (list, tuple)):  # --endpoint given N times
            urls = list(explicit.pop("endpoint"))
            explicit.update(endpoint=urls[0], more_endpoints=tuple(urls[1:]))
        settings = replace(settings, **explicit, endpoint_configured=configured, secrets=secrets)
        if "," in settings.endpoint:  # PARAVT_ENDPOINT=URL,URL,...
            urls = [u.strip() for u in settings.endpoint.split(",") if u.strip()]
            settings = replace(settings, endpoint=urls[0], more_endpoints=tuple(urls[1:]))
        return settings


def _secrets(dotenv, environ, endpoint: str | list[str] | None) -> frozenset[str]:
    """The credentials loading saw: API keys, endpoint and database passwords wherever
    given, and every `.env` value named as a credential (a settings file holds them side by
    side)."""
    found = {v for k, v in dotenv.items() if v and len(v) >= 8 and _SECRET_NAME.search(k)}
    urls = list(endpoint) if isinstance(endpoint, (list, tuple)) else [endpoint or ""]
    for source in (dotenv, environ):
        found.add(source.get("PARAVT_API_KEY") or "")
        urls += (source.get("PARAVT_ENDPOINT") or "").split(",")
        urls.append(source.get("PARAVT_DATABASE_URL") or "")
    for url in urls:
        found.update(url_secrets(url.strip()))
    return frozenset(s for s in found if s)


def _convert(name: str, raw: str):
    if name in ("home", "board_db", "checkpoint_db"):
        return Path(raw)
    if name in ("request_timeout", "database_retry_s"):
        try:
            return float(raw)
        except ValueError:
            raise ValueError(
                f"PARAVT_{name.upper()} must be a number of seconds, got {raw!r}"
            ) from None
    return raw
