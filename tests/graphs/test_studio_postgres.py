"""The LangGraph server path with a database URL: `langgraph dev` on langgraph.postgres.json
writes its threads' checkpoints and the board's runs to the same PostgreSQL database."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import psycopg
import pytest

import app
from graphs.store.postgres.board import PostgresBoard
from testing.scripted import ScriptedServer
from tests.support.studio import ROOT, ask, langgraph_dev, reply


def test_the_postgres_config_serves_the_same_graphs_with_its_checkpointer():
    plain = json.loads((ROOT / "langgraph.json").read_text())
    postgres = json.loads((ROOT / "langgraph.postgres.json").read_text())
    assert postgres.pop("checkpointer") == {
        "backend": "custom",
        "path": "./graphs/studio.py:postgres_checkpointer",
    }
    assert postgres == plain


def test_studio_passes_the_url_and_picks_the_postgres_config(monkeypatch):
    seen = {}

    def call(command, env, cwd):
        seen.update(command=command, env=env)
        return 0

    monkeypatch.setattr(app.subprocess, "call", call)
    url = "postgresql://paravt:pw@db:5432/paravt"
    assert app.main(["--env-file", "", "--database-url", url, "studio"]) == 0
    assert seen["command"][-1].endswith("langgraph.postgres.json")
    assert seen["env"]["PARAVT_DATABASE_URL"] == url
    monkeypatch.delenv("PARAVT_DATABASE_URL", raising=False)
    assert app.main(["--env-file", "", "studio"]) == 0
    assert seen["command"][-1].endswith("langgraph.json")
    assert "PARAVT_DATABASE_URL" not in seen["env"]


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.integration
def test_a_chat_on_the_server_is_checkpointed_and_boarded_in_postgresql(
    tmp_path, pg_url, needle_video
):
    with (
        ScriptedServer(reply) as model_server,
        langgraph_dev(
            tmp_path,
            model_server.base_url,
            Path(needle_video.path).parent,
            config="langgraph.postgres.json",
            extra_env={"PARAVT_DATABASE_URL": pg_url},
        ) as (url, _),
        httpx.Client(base_url=url, timeout=120) as client,
    ):
        thread = client.post("/threads", json={}).json()["thread_id"]
        answer = ask(client, thread, f"{Path(needle_video.path).name} What colour?")
    log = next(tmp_path.glob("studio-*.log"))
    assert answer["status"] == "answered", log.read_text()[-2000:]
    with psycopg.connect(pg_url) as conn:
        saved = conn.execute("select count(*) from checkpoints where thread_id = %s", [thread])
        assert saved.fetchone()[0] > 0, "the server's checkpoints are in the database"
    board = PostgresBoard(pg_url)
    assert [r["status"] for r in board.runs() if r["thread_id"] == thread] == ["answered"]
    board.close()
    assert not (tmp_path / "board.sqlite").exists(), "no SQLite board beside it"
