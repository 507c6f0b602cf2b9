"""`app.py run` on the embedded default: with no endpoint configured and nothing answering at
the default, it starts paravt-nano on a local CPU server, says so in one line, and answers the
demo's question right; the endpoint answers before any frame is decoded (issue 40)."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import pytest

import app
from agents.client.llm import OpenAIChatModel
from agents.synthetic import read_manifest
from graphs.settings import DEFAULT_ENDPOINT
from serving.checkpoints import default_checkpoint
from tests.support.harness import ROOT, record_decodes

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def listening(url: str) -> bool:
    parts = urlsplit(url)
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex((parts.hostname, parts.port)) == 0


def test_run_with_nothing_listening_starts_the_local_nano(tmp_path, monkeypatch, capsys):
    if listening(DEFAULT_ENDPOINT):
        pytest.skip(f"something listens at the default endpoint {DEFAULT_ENDPOINT}")
    assert default_checkpoint() is not None, "assets/paravt-nano should hold the checkpoint"
    for name in ("PARAVT_ENDPOINT", "PARAVT_API_KEY", "PARAVT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    events: list = []
    fetch = OpenAIChatModel._fetch_model_list

    async def model_list(self):
        body = await fetch(self)
        events.append(("endpoint answered", self.base_url))
        return body

    monkeypatch.setattr(OpenAIChatModel, "_fetch_model_list", model_list)
    record_decodes(monkeypatch, events)
    demo, items = read_manifest(ROOT / "assets" / "demo" / "needle.json")
    item = next(i for i in items if i.kind == "multiple_choice")
    argv = ["--env-file", "", "--home", str(tmp_path), "run", "--video", demo.path]
    argv += ["--question", item.question, "--kind", item.kind, "--json"]
    argv += [f"--option={option}" for option in item.options]
    code = app.main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    record = json.loads(out)
    assert record["status"] == "answered" and record["answer"] == item.answer == "D"
    said = " ".join(err.split())
    assert said.count("starting the local CPU server on assets/paravt-nano") == 1
    assert f"no endpoint configured and no server at {DEFAULT_ENDPOINT}" in said
    assert "WARNING" not in err and "error" not in err.lower()
    kinds = [kind for kind, _ in events]
    assert "decode" in kinds, "the run decoded its frames"
    first_decode = kinds.index("decode")
    answered = [url for kind, url in events[:first_decode] if kind == "endpoint answered"]
    assert answered and all(url != DEFAULT_ENDPOINT for url in answered), events[:first_decode]


def test_an_explicit_dead_endpoint_stays_an_error(tmp_path, monkeypatch, capsys):
    """Named by the environment (as by a flag or .env), a dead endpoint is not replaced."""
    monkeypatch.setenv("PARAVT_ENDPOINT", "http://127.0.0.1:9/v1")
    events = record_decodes(monkeypatch)
    demo, items = read_manifest(ROOT / "assets" / "demo" / "needle.json")
    argv = ["--env-file", "", "--home", str(tmp_path), "run", "--video", demo.path]
    code = app.main([*argv, "--question", items[0].question])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1 and err.count("error:") == 1
    assert "http://127.0.0.1:9/v1" in err and "connection refused" in err
    assert "starting the local CPU server" not in err and events == []
