"""The CLI's event loop: uvloop where installed, asyncio's own on request; Ctrl-C of a real
`app.py run` on it still ends in one message, the run recorded as interrupted."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from graphs.runs import event_loop
from graphs.store.sqlite_board import Board
from testing.scripted import ScriptedServer
from tests.support.harness import app_command, app_env


async def loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_a_command_runs_on_uvloop_when_it_is_installed(monkeypatch):
    pytest.importorskip("uvloop")
    monkeypatch.delenv(event_loop.ENV, raising=False)
    assert event_loop.run(loop_module()).startswith("uvloop")


def test_asyncio_s_own_loop_on_request(monkeypatch):
    monkeypatch.setenv(event_loop.ENV, "asyncio")
    assert event_loop.run(loop_module()).startswith("asyncio")


def test_an_unknown_loop_is_named_in_the_error(monkeypatch):
    monkeypatch.setenv(event_loop.ENV, "trio")
    coroutine = loop_module()
    with pytest.raises(ValueError, match="PARAVT_EVENT_LOOP='trio': use uvloop or asyncio"):
        event_loop.run(coroutine)
    coroutine.close()


@contextmanager
def ctrl_c_delivered() -> Iterator[None]:
    """Children started inside get Ctrl-C as at a terminal. A shell starts a background job
    (``pytest ... &``) with SIGINT ignored, and a child inherits that: its Ctrl-C would never
    arrive. A handler of this process is reset to the default across exec; an ignored signal
    is not."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if previous is signal.SIG_IGN:
            signal.signal(signal.SIGINT, previous)


def test_ctrl_c_of_a_run_on_the_cli_s_loop_is_one_message_and_an_interrupted_run(
    tmp_path, needle_video
):
    pytest.importorskip("uvloop")
    with ScriptedServer("never sent", latency_s=60) as server:  # the first turn hangs
        command = app_command(
            "run",
            "--video",
            needle_video.path,
            "--question",
            "What colour?",
            "--overview-frames",
            "4",
            endpoint=server.base_url,
        )
        # a child that outlives the bound prints its tasks (SIGUSR1, tests/support/task_dump),
        # then is aborted and dumps every thread (faulthandler)
        dump = str(Path(__file__).parents[2] / "support" / "task_dump")
        path = os.pathsep.join(p for p in (dump, os.environ.get("PYTHONPATH")) if p)
        env = app_env(tmp_path, PYTHONFAULTHANDLER="1", PYTHONPATH=path)
        with ctrl_c_delivered():
            child = subprocess.Popen(
                command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        try:
            deadline = time.monotonic() + 60
            while not [b for b in server.requests if b.get("messages")]:
                assert child.poll() is None and time.monotonic() < deadline, "no turn was sent"
                time.sleep(0.05)
            child.send_signal(signal.SIGINT)
            try:
                _, err = child.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                child.send_signal(signal.SIGUSR1)
                time.sleep(2)
                child.send_signal(signal.SIGABRT)
                _, err = child.communicate(timeout=30)
                pytest.fail(f"no exit 30 s after Ctrl-C; its tasks and threads:\n{err.decode()}")
        finally:
            child.kill()
    text = err.decode()
    assert child.returncode == 130, text
    assert "Traceback" not in text and text.count("interrupted") == 1, text
    (run,) = Board(tmp_path / "board.sqlite").runs()
    assert run["status"] == "interrupted"
