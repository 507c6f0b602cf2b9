"""The board and checkpoints in PostgreSQL through the real CLI: resume, migrate, bad input,
and a dropped connection replaced (langgraph#5675)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections import Counter

import psycopg
import pytest

from graphs.store.postgres.board import PostgresBoard
from graphs.store.postgres.checkpointer import open_postgres_checkpointer
from graphs.store.sqlite_board import Board
from testing.scripted import Reply, ScriptedServer
from tests.support.harness import app_command, app_env, crop_then_answer, is_subagent, run_cli

pytestmark = pytest.mark.postgres


def run_args(video: str, thread: str, *extra: str) -> list[str]:
    return [
        "run",
        "--video",
        video,
        "--question",
        "What is shown?",
        "--thread-id",
        thread,
        "--max-turns",
        "1",
        "--overview-frames",
        "4",
        "--crop-max-frames",
        "4",
        "--json",
        *extra,
    ]


def fails_after_the_crops(body: dict) -> str | Reply:
    """Two crops answered, then the main agent's answer turn fails (HTTP 500)."""
    reply = crop_then_answer(body)
    return Reply("the model server broke", status=500) if "<answer>" in reply else reply


def last_record(done) -> dict:
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_failed_run_resumes_by_thread_id_without_asking_its_sub_agents_again(
    pg_url, needle_video
):
    env = app_env(None, PARAVT_REQUEST_TIMEOUT="5")
    with ScriptedServer(fails_after_the_crops) as broken:
        command = app_command(
            "--database-url", pg_url, *run_args(needle_video.path, "th"), endpoint=broken.base_url
        )
        failed = run_cli(command, env)
    assert failed.returncode == 1 and last_record(failed)["status"] == "failed", failed.stderr
    with ScriptedServer(crop_then_answer) as healthy:
        command[command.index(broken.base_url)] = healthy.base_url
        resumed = run_cli(command, env)
        asked = Counter("sub_agent" if is_subagent(r) else "main" for r in healthy.requests)
    assert resumed.returncode == 0, resumed.stderr
    assert last_record(resumed)["status"] == "answered"
    assert asked == {"main": 1}, "the finished sub-agents were not asked again"
    board = PostgresBoard(pg_url)
    (run,) = board.runs()
    assert run["status"] == "answered" and run["thread_id"] == "th"
    assert Counter(n.key for n in board.notes(run["run_id"])) == {"t0c0": 1, "t0c1": 1}
    board.close()


def test_migrate_copies_a_sqlite_home_once_and_its_threads_resume_there(
    tmp_path, pg_url, needle_video
):
    home = tmp_path / "home"
    env = app_env(home, PARAVT_REQUEST_TIMEOUT="5")
    with ScriptedServer(crop_then_answer) as server:
        done = run_cli(
            app_command(*run_args(needle_video.path, "done"), endpoint=server.base_url), env
        )
    with ScriptedServer(fails_after_the_crops) as server:
        failed = run_cli(
            app_command(*run_args(needle_video.path, "open"), endpoint=server.base_url), env
        )
    assert done.returncode == 0 and failed.returncode == 1
    migrate = app_command("board", "migrate", "--to", pg_url)
    first, second = run_cli(migrate, env), run_cli(migrate, env)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    said = " ".join(first.stderr.split())
    assert "2 of 2 runs, 4 of 4 notes, 2 of 2 traces" in said
    assert "s3cret-pw" not in first.stderr + first.stdout and ":***@" in said
    again = " ".join(second.stderr.split())
    assert "0 of 2 runs, 0 of 4 notes, 0 of 2 traces, 0 of" in again, again
    assert "0 of 0 checkpoints" not in again and " 0 pending writes" not in again

    exported = {}
    for where in ("sqlite", "postgres"):
        flags = ("--database-url", pg_url) if where == "postgres" else ()
        out = tmp_path / f"{where}.jsonl"
        assert (
            run_cli(app_command(*flags, "traces", "export", "--out", str(out)), env).returncode == 0
        )
        exported[where] = sorted(out.read_text().splitlines())
        listing = run_cli(app_command(*flags, "board"), env)
        assert listing.returncode == 0 and listing.stdout.count("answered") == 1
    assert exported["sqlite"] == exported["postgres"] and len(exported["sqlite"]) == 2

    with ScriptedServer(crop_then_answer) as server:
        on_pg = app_command(
            "--database-url", pg_url, *run_args(needle_video.path, "open"), endpoint=server.base_url
        )
        resumed = run_cli(on_pg, env)
        asked = Counter("sub_agent" if is_subagent(r) else "main" for r in server.requests)
    assert resumed.returncode == 0 and last_record(resumed)["status"] == "answered"
    assert asked == {"main": 1}, "the migrated checkpoint resumed after its sub-agents"
    with sqlite3.connect(home / "board.sqlite") as conn:
        assert conn.execute("select count(*) from runs where status = 'failed'").fetchone() == (1,)


def test_bad_database_urls_get_one_message_each_and_write_nothing(tmp_path, pg_cluster, pg_url):
    env = app_env(tmp_path / "home")
    Board(tmp_path / "home" / "board.sqlite").close()  # a home to migrate
    wrong_password = pg_url.replace("s3cret-pw", "not-it")
    cases = {
        "wrong password": (wrong_password, "password authentication failed"),
        "unreachable": ("postgresql://paravt:s3cret-pw@127.0.0.1:1/x", "Connection refused"),
        "not postgres": ("mysql://paravt:s3cret-pw@host/db", "is not a PostgreSQL URL"),
        "no such database": (pg_cluster.url("nope"), "create the database first"),
    }
    for name, (url, expected) in cases.items():
        for argv in (["board"], ["board", "migrate", "--to", url]):
            flags = ["--database-url", url] if argv == ["board"] else []
            done = run_cli(app_command(*flags, *argv), env)
            said = " ".join(done.stderr.split())
            assert done.returncode == 2, (name, done.stderr)
            assert expected in said and "Traceback" not in said, (name, said)
            assert "s3cret-pw" not in said and "not-it" not in said, (name, said)
            assert said.count("error:") == 1, (name, said)
    with psycopg.connect(pg_url) as conn:  # the wrong password wrote nothing to this database
        tables = conn.execute("select count(*) from pg_tables where schemaname = 'public'")
        assert tables.fetchone() == (0,)


def test_migrate_to_a_board_of_a_newer_version_is_refused_before_copying(
    tmp_path, pg_url, needle_video
):
    home = tmp_path / "home"
    env = app_env(home)
    with ScriptedServer(crop_then_answer) as server:
        assert (
            run_cli(
                app_command(*run_args(needle_video.path, "t"), endpoint=server.base_url), env
            ).returncode
            == 0
        )
    PostgresBoard(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        conn.execute("update paravt_meta set value = '7' where key = 'schema_version'")
    done = run_cli(app_command("board", "migrate", "--to", pg_url), env)
    said = " ".join(done.stderr.split())
    assert done.returncode == 2 and "schema version 7" in said and "Traceback" not in said
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("select count(*) from paravt_runs").fetchone() == (0,)
        assert conn.execute("select to_regclass('checkpoints')").fetchone() == (None,)


def kill_connections(url: str) -> int:
    """Terminate every other connection to the database, as a restart or a pooler would."""
    with psycopg.connect(url, autocommit=True) as conn:
        killed = conn.execute(
            "select count(pg_terminate_backend(pid)) from pg_stat_activity "
            "where datname = current_database() and pid <> pg_backend_pid()"
        )
        return killed.fetchone()[0]


async def test_connections_dropped_under_the_board_and_the_checkpointer_are_replaced(pg_url):
    board = PostgresBoard(pg_url)
    board.start_run("r", video="v", question="q", settings={}, thread_id="r")
    config = {"configurable": {"thread_id": "r", "checkpoint_ns": ""}}
    async with open_postgres_checkpointer(pg_url) as saver:
        assert await saver.aget_tuple(config) is None
        for _ in range(3):
            assert kill_connections(pg_url) >= 2
            assert board.run("r")["status"] == "running"
            assert await saver.aget_tuple(config) is None
            assert [r["run_id"] for r in board.runs()] == ["r"]
        await asyncio.sleep(0)
    board.close()


async def test_checkpoints_migrated_by_a_newer_saver_are_refused_and_left_alone(pg_url):
    from graphs.store.postgres.url import DatabaseError

    async with open_postgres_checkpointer(pg_url):
        pass  # LangGraph's migrations, once
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("insert into checkpoint_migrations (v) values (999)")
    with pytest.raises(DatabaseError, match="migrated by a newer langgraph-checkpoint-postgres"):
        async with open_postgres_checkpointer(pg_url):
            pass
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("select max(v) from checkpoint_migrations").fetchone() == (999,)
