"""The CLI's checkpoint file: resume across connections, LangGraph's own savers' files, locks."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from graphs.store.checkpointer import open_checkpointer
from tests.support.fakes import ScriptedModel, calls, endpoint_down
from tests.support.graph import ask, tool_responses


async def test_a_failed_run_resumes_from_the_reopened_file(tmp_path, needle_video, board):
    path, failing = tmp_path / "checkpoints.sqlite", {"armed": True}

    def sub(request):
        if "10.0 - 20.0" in tool_responses(request) and failing["armed"]:
            return endpoint_down(), 0.3  # fails after its siblings have finished
        return "a note"

    first = ScriptedModel(main=[calls((0, 10), (10, 20), (20, 30))], sub=sub)
    async with open_checkpointer(path) as saver:
        result = await ask(first, board, needle_video, checkpointer=saver, thread_id="t1")
    assert result.status == "failed"
    failing["armed"] = False
    second = ScriptedModel(main=["<think>x</think><answer>B</answer>"], sub=sub)
    async with open_checkpointer(path) as saver:
        resumed = await ask(second, board, needle_video, checkpointer=saver, thread_id="t1")
    assert resumed.status == "answered" and resumed.run_id == result.run_id
    assert len(second.sub_requests) == 1, "finished branches must not be asked again"
    assert len(board.notes(result.run_id)) == 3


async def test_files_of_langgraphs_async_saver_and_of_this_one_read_back_in_both(
    tmp_path, needle_video, board
):
    answer = "<think>x</think><answer>A</answer>"
    theirs, ours = tmp_path / "theirs.sqlite", tmp_path / "ours.sqlite"
    async with AsyncSqliteSaver.from_conn_string(str(theirs)) as saver:
        written = await ask(
            ScriptedModel(main=[answer]), board, needle_video, checkpointer=saver, thread_id="a"
        )
    async with open_checkpointer(ours) as saver:
        await ask(
            ScriptedModel(main=[answer]), board, needle_video, checkpointer=saver, thread_id="b"
        )
    for path, thread, Reader in ((theirs, "a", None), (ours, "b", AsyncSqliteSaver)):
        config = {"configurable": {"thread_id": thread}}
        if Reader is None:
            async with open_checkpointer(path) as saver:
                got = await saver.aget_tuple(config)
                listed = [c async for c in saver.alist(config)]
        else:
            async with Reader.from_conn_string(str(path)) as saver:
                got = await saver.aget_tuple(config)
                listed = [c async for c in saver.alist(config)]
        assert got is not None and got.checkpoint["channel_values"]["answer"] == "A"
        assert len(listed) > 2 and listed[0].config == got.config
    model = ScriptedModel(main=[])  # a finished thread answers from its checkpoint alone
    async with open_checkpointer(theirs) as saver:
        again = await ask(model, board, needle_video, checkpointer=saver, thread_id="a")
    assert again.answer == written.answer and model.requests == []


def _hold_write_lock(path, seconds: float, held: threading.Event) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    held.set()
    time.sleep(seconds)
    conn.execute("COMMIT")
    conn.close()


async def test_a_write_waits_for_another_writer_and_gives_up_after_the_timeout(tmp_path):
    path = tmp_path / "checkpoints.sqlite"
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}}
    for hold_s, timeout_s, succeeds in ((0.4, 5.0, True), (2.0, 0.3, False)):
        async with open_checkpointer(path, busy_timeout_s=timeout_s) as saver:
            held = threading.Event()
            holder = threading.Thread(target=_hold_write_lock, args=(path, hold_s, held))
            holder.start()
            held.wait()
            began = time.monotonic()
            write = saver.aput_writes(config, [("answer", "A")], task_id=f"task-{hold_s}")
            if succeeds:
                await write
            else:
                with pytest.raises(sqlite3.OperationalError, match="locked"):
                    await write
            waited = time.monotonic() - began
            await asyncio.to_thread(holder.join)
        assert (waited >= 0.3) if succeeds else (waited < hold_s)
    with sqlite3.connect(path) as conn:
        assert conn.execute("select count(*) from writes").fetchone() == (1,)


async def test_a_write_behind_another_processs_lock_leaves_the_loop_free_and_in_order(tmp_path):
    path = tmp_path / "checkpoints.sqlite"
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}}
    async with open_checkpointer(path, busy_timeout_s=5.0) as saver:
        held = threading.Event()
        holder = threading.Thread(target=_hold_write_lock, args=(path, 0.5, held))
        holder.start()
        held.wait()
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.02)

        ticker = asyncio.create_task(tick())
        first = asyncio.create_task(saver.aput_writes(config, [("answer", "A")], task_id="a"))
        await asyncio.sleep(0)  # the first write has met the lock and gone to the worker
        second = asyncio.create_task(saver.aput_writes(config, [("answer", "B")], task_id="b"))
        await asyncio.gather(first, second)
        ticker.cancel()
        await asyncio.to_thread(holder.join)
        assert ticks >= 5, "the loop was blocked while the write waited for the lock"
        await saver.aput_writes(config, [("answer", "C")], task_id="c")  # back on the loop
    with sqlite3.connect(path) as conn:
        rows = conn.execute("select task_id from writes order by rowid").fetchall()
    assert rows == [("a",), ("b",), ("c",)]


async def test_reopening_the_file_makes_the_connections_first_write_at_once(tmp_path):
    """A connection's first commit opens the write-ahead log: done when the file opens, not
    on a run's first step; the write changes nothing in the file."""
    path = tmp_path / "checkpoints.sqlite"
    async with open_checkpointer(path):
        pass
    wal = tmp_path / "checkpoints.sqlite-wal"
    assert not wal.exists() or wal.stat().st_size == 0  # the last close folded it back
    async with open_checkpointer(path) as saver:
        assert wal.stat().st_size > 0
        assert saver.conn.execute("PRAGMA user_version").fetchone() == (0,)
        assert saver.conn.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
