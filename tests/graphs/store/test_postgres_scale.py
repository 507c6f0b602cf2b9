"""One PostgreSQL board under real processes: 16 `app.py run` at once on a new database, 64
concurrent runs, and the database restarted (or gone for longer) in the middle of a run."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

from graphs.store.postgres.board import PostgresBoard
from testing.scripted import ScriptedServer
from tests.support.harness import ROOT, app_command, app_env, crop_then_answer, is_subagent, run_cli

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.integration]
AT_BARRIER = """
import os, sys, time
import app
while not os.path.exists(sys.argv[1]):
    time.sleep(0.0005)
sys.exit(app.main(sys.argv[2:]))
"""
# One process running 16 questions at once on the database's board and checkpoints.
SIXTEEN_AT_ONCE = """
import asyncio, sys
from agents.question import Question
from graphs.runs import event_loop
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from graphs.settings import Settings
from graphs.store.stores import open_board, open_checkpoints

async def main(url, endpoint, video, tag):
    settings = Settings(database_url=url, endpoint=endpoint)
    board = open_board(settings)
    context = Context(max_turns=1, overview_frames=4, crop_max_frames=4)
    async with settings.chat_model() as llm, open_checkpoints(settings) as saver:
        graph = compile_graph(llm, board, checkpointer=saver)
        results = await asyncio.gather(*(
            run_question(graph, board, video_path=video, question=Question(f"What? {tag}-{i}"),
                         context=context, thread_id=f"{tag}-{i}")
            for i in range(16)))
    board.close()
    print(" ".join(r.status for r in results))

event_loop.run(main(*sys.argv[1:]))
"""


def run_args(video: str, thread: str) -> list[str]:
    return [
        "run",
        "--video",
        video,
        "--question",
        f"What is shown? ({thread})",
        "--thread-id",
        thread,
        "--max-turns",
        "1",
        "--overview-frames",
        "4",
        "--crop-max-frames",
        "4",
        "--json",
    ]


def check_every_run_and_note_once(url: str, threads: set[str]) -> None:
    board = PostgresBoard(url)
    try:
        runs = board.runs(limit=1000)
        assert {r["thread_id"] for r in runs} == threads and len(runs) == len(threads)
        assert {r["status"] for r in runs} == {"answered"}
        for run in runs:
            keys = Counter(note.key for note in board.notes(run["run_id"]))
            assert keys == {"t0c0": 1, "t0c1": 1}, run["run_id"]
            assert board.trace(run["run_id"])["status"] == "answered"
        with board.connection() as conn:
            (saved,) = conn.execute("select count(distinct thread_id) from checkpoints").fetchone()
        assert saved == len(threads)
    finally:
        board.close()


def test_sixteen_app_run_processes_on_a_new_database(tmp_path, pg_url, needle_video):
    go = tmp_path / "go"
    with ScriptedServer(crop_then_answer, latency_s=0.05) as server:
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    AT_BARRIER,
                    str(go),
                    "--env-file",
                    "",
                    "--endpoint",
                    server.base_url,
                    "--database-url",
                    pg_url,
                    *run_args(needle_video.path, f"thread-{i}"),
                ],
                cwd=ROOT,
                env=app_env(tmp_path / "home"),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(16)
        ]
        time.sleep(6.0)  # every process has imported app and polls the barrier
        go.touch()
        done = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    assert [(code, err[-600:]) for code, _, err in done if code != 0] == []
    assert not any("Traceback" in err or "error" in err.lower() for _, _, err in done)
    assert {json.loads(out.splitlines()[-1])["status"] for _, out, _ in done} == {"answered"}
    check_every_run_and_note_once(pg_url, {f"thread-{i}" for i in range(16)})


def test_sixty_four_concurrent_runs_from_four_processes(pg_url, needle_video):
    with ScriptedServer(crop_then_answer, latency_s=0.1) as server:
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    SIXTEEN_AT_ONCE,
                    pg_url,
                    server.base_url,
                    needle_video.path,
                    f"p{k}",
                ],
                cwd=ROOT,
                env=app_env(None),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for k in range(4)
        ]
        done = [(p.wait(timeout=300), *p.communicate()) for p in procs]
        requests = len(server.requests)
    assert [(code, err[-800:]) for code, _, err in done if code != 0] == []
    assert [out.split() for _, out, _ in done] == [["answered"] * 16] * 4
    assert requests == 64 * 4, "each run asked its two turns and two sub-agents once"
    check_every_run_and_note_once(pg_url, {f"p{k}-{i}" for k in range(4) for i in range(16)})


def when_sub_agents_are_asked(server: ScriptedServer, action) -> threading.Thread:
    """Call ``action`` in a thread once the server has received a sub-agent's request."""

    def watch() -> None:
        deadline = time.monotonic() + 120
        while not any(is_subagent(r) for r in list(server.requests)):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        action()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_restart_in_the_middle_of_a_run_is_ridden_out(own_cluster, needle_video):
    url = own_cluster.create_database("board")
    env = app_env(None)
    with ScriptedServer(crop_then_answer, latency_s=1.0) as server:
        command = app_command(
            "--database-url", url, *run_args(needle_video.path, "t"), endpoint=server.base_url
        )
        restarts = []

        def restart() -> None:
            own_cluster.stop("fast")
            restarts.append(time.monotonic())
            time.sleep(1.0)
            own_cluster.start()

        watcher = when_sub_agents_are_asked(server, restart)
        done = run_cli(command, env)
        watcher.join(timeout=60)
    assert restarts, "the database was restarted during the run"
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["status"] == "answered"
    check_every_run_and_note_once(url, {"t"})


def test_an_outage_longer_than_the_wait_fails_cleanly_and_the_run_resumes(
    own_cluster, needle_video
):
    url = own_cluster.create_database("board")
    env = app_env(None, PARAVT_DATABASE_RETRY_S="2")
    with ScriptedServer(crop_then_answer, latency_s=1.0) as server:
        command = app_command(
            "--database-url", url, *run_args(needle_video.path, "t"), endpoint=server.base_url
        )
        watcher = when_sub_agents_are_asked(server, lambda: own_cluster.stop("fast"))
        lost = run_cli(command, env)
        watcher.join(timeout=60)
        asked_before = Counter("sub" if is_subagent(r) else "main" for r in server.requests)
    said = " ".join(lost.stderr.split())
    assert lost.returncode == 2, lost.stderr
    assert said.count("error:") == 1 and "Traceback" not in said, said
    assert "did not come back within 2 s" in said and ":***@" in said and "s3cret" not in said
    own_cluster.start()
    board = PostgresBoard(url)  # its owner has ended: the run is interrupted, not running
    (run,) = board.runs()
    assert run["status"] == "interrupted", run
    board.close()
    with ScriptedServer(crop_then_answer) as server:
        command[command.index(next(c for c in command if c.startswith("http")))] = server.base_url
        resumed = run_cli(command, env)
        asked_after = Counter("sub" if is_subagent(r) else "main" for r in server.requests)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout.splitlines()[-1])["status"] == "answered"
    assert asked_before["main"] == 1 and asked_after["main"] == 1, "the first turn was kept"
    check_every_run_and_note_once(url, {"t"})
