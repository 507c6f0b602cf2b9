"""Credentials never leave memory: URL passwords, API keys and Authorization values are masked
wherever the client prints, logs or raises, and the key goes with every request (issue 36)."""

from __future__ import annotations

import logging
import sys

import pytest

from agents.client.completion import EndpointError
from agents.client.llm import OpenAIChatModel
from agents.client.redact import RedactingFilter, Redactor, redact_text, redact_url, url_secrets
from agents.requests import ModelRequest
from graphs.settings import Settings
from testing.scripted import Reply, ScriptedServer

PASSWORD, KEY = "pw-4f9c2e71", "sk-canary-8d21b7"


def ask() -> ModelRequest:
    return ModelRequest(role="main", messages=[{"role": "user", "content": "hi"}])


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:pw-1@h:8/v1", "http://user:***@h:8/v1"),
        ("https://tok123@h/v1", "https://***@h/v1"),
        ("https://h/v1?api-key=abc&x=1", "https://h/v1?api-key=***&x=1"),
        ("http://127.0.0.1:30000/v1", "http://127.0.0.1:30000/v1"),
    ],
)
def test_a_url_is_shown_with_its_credentials_masked(url, shown):
    assert redact_url(url) == shown
    assert all(secret not in redact_url(url) for secret in url_secrets(url))


def test_text_loses_known_secrets_userinfo_and_authorization_values():
    text = (
        f'{{"error": "refused http://u:{PASSWORD}@h/v1", "authorization": "Bearer {KEY}"}} '
        f"Authorization: Basic dXNlcjpwdw== and again {KEY}"
    )
    masked = redact_text(text, [KEY])
    assert PASSWORD not in masked and KEY not in masked and "dXNlcjpwdw==" not in masked
    assert "http://u:***@h/v1" in masked and masked.count("***") == 4


def test_the_logging_filter_masks_messages_arguments_and_tracebacks(caplog):
    handler_filter = RedactingFilter(Redactor([KEY]))
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "key %s at %s", (KEY, "u"), None)
    try:
        raise RuntimeError(f"failed with {KEY}")
    except RuntimeError:
        record.exc_info = sys.exc_info()
    assert handler_filter.filter(record)
    assert KEY not in record.getMessage() and KEY not in record.exc_text
    assert record.getMessage() == "key *** at u"


async def test_url_credentials_travel_as_basic_auth_and_never_in_a_message(caplog):
    def echo(body):  # a server that echoes what it was sent, as some proxies do
        return Reply(status=400, text=f"refused {server.authorizations[-1]} for {body['model']}")

    with ScriptedServer(echo) as server:
        url = server.base_url.replace("://", f"://paravt:{PASSWORD}@")
        with caplog.at_level(logging.DEBUG):
            async with OpenAIChatModel(url, api_key=KEY, max_retries=1) as llm:
                with pytest.raises(EndpointError) as info:
                    await llm.complete(ask())
    assert server.authorizations[0].startswith("Basic ")  # as HTTP clients send userinfo
    message = str(info.value)
    assert "paravt:***@" in message and PASSWORD not in message
    assert "refused *** for" in message and server.authorizations[0].split()[1] not in message
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP Request" in logged  # httpx logs each request at INFO ...
    assert PASSWORD not in logged  # ... to a URL without credentials
    assert info.value.base_url == redact_url(url)


async def test_the_key_goes_with_every_request_the_model_list_first():
    with ScriptedServer("<answer>A</answer>", api_key=KEY) as server:
        async with OpenAIChatModel(server.base_url, api_key=KEY) as llm:
            await llm.warm_up()
            await llm.complete(ask())
    assert server.authorizations and set(server.authorizations) == {f"Bearer {KEY}"}


async def test_a_refused_key_is_masked_in_the_error():
    with ScriptedServer("x", api_key="the-right-key") as server:
        async with OpenAIChatModel(server.base_url, api_key=KEY, max_retries=0) as llm:
            with pytest.raises(EndpointError) as info:
                await llm.complete(ask())
    assert info.value.status == 401 and KEY not in str(info.value)


def test_settings_show_no_credentials(tmp_path, monkeypatch):
    env = tmp_path / ".env"
    env.write_text(f"PARAVT_API_KEY={KEY}\nHF_TOKEN=hf_dotenv_canary_77\n")
    monkeypatch.delenv("PARAVT_API_KEY", raising=False)
    settings = Settings.load(env_file=env, endpoint=f"http://u:{PASSWORD}@h/v1")
    assert settings.api_key == KEY and settings.endpoint_configured
    shown = repr(settings) + settings.shown_endpoint
    assert KEY not in shown and PASSWORD not in shown and "u:***@h" in shown
    masked = settings.redact(f"{KEY} {PASSWORD} hf_dotenv_canary_77")
    assert masked == "*** *** ***"
    monkeypatch.delenv("PARAVT_ENDPOINT", raising=False)
    assert not Settings.load(env_file=None).endpoint_configured
    monkeypatch.setenv("PARAVT_ENDPOINT", "http://127.0.0.1:30000/v1")  # the default, named
    assert Settings.load(env_file=None).endpoint_configured
