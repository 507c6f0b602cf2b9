"""Brief calls on a command's own loop: a request whose frames are in memory is prepared in
place, a board call that can take its locks at once is made in place; anything that would
decode or wait goes to a thread, and nothing is lost either way."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

from agents.media import frame_store, video
from agents.sub_turn import Window, subagent_request, window_frames
from graphs.runs import event_loop, offload
from graphs.store.sqlite_board import Board


def window_request(path: str, start: float):
    window = Window(path, "video", start, start + 10.0, 1, 0)
    frames = window_frames(window, fps=1.0, max_frames=4, max_pixels=128 * 96)
    request = subagent_request(
        window, frames, question=None, board=[], temperature=0.0, max_tokens=16
    )
    return request, frames


def test_a_request_is_prepared_in_place_only_from_frames_in_memory(needle_video):
    request, frames = window_request(needle_video.path, 31.0)
    decoded = frame_store.FRAME_CACHE.stats["frames_decoded"]
    assert (
        frame_store.cached_frames(needle_video.path, tuple(frames["timestamps"]), 128 * 96) is None
    )
    assert request.prepare(cached_only=True) is False and not request.ready
    assert frame_store.FRAME_CACHE.stats["frames_decoded"] == decoded  # nothing was decoded
    full, _ = window_request(needle_video.path, 31.0)
    assert full.prepare() is True  # decodes, into the cache
    again, _ = window_request(needle_video.path, 31.0)
    assert again.prepare(cached_only=True) is True
    assert again.wire() == full.wire()


def test_the_command_loop_is_owned_by_its_tasks_and_no_other_loop_is():
    async def seen() -> tuple[bool, bool]:
        return event_loop.owned(), await asyncio.create_task(asyncio.sleep(0, event_loop.owned()))

    assert event_loop.run(seen()) == (True, True)
    assert asyncio.run(seen()) == (False, False)


def test_a_board_call_waits_for_nothing_in_place(tmp_path):
    board = Board(tmp_path / "board.sqlite")
    done, value = board.at_once(board.runs)
    assert done and value == []
    in_place = board.at_once(lambda: board._db.conn.execute("PRAGMA busy_timeout").fetchone())
    assert in_place == (True, (0,)), "in place, SQLite does not wait for a lock"
    other = sqlite3.connect(tmp_path / "board.sqlite")
    other.execute("BEGIN IMMEDIATE")  # another process's write lock
    done, value = board.at_once(
        board.start_run, "r1", video="v", question="q", settings={}, thread_id="r1"
    )
    assert (done, value) == (False, None)
    other.rollback()
    assert board.run("r1") is None, "a call that would wait wrote nothing"
    timeout = board._db.conn.execute("PRAGMA busy_timeout").fetchone()[0]
    assert timeout == int(board.busy_timeout_s * 1000), "the busy timeout is restored"
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with board._lock:  # another thread in the middle of a board call
            held.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    assert board.at_once(board.runs) == (False, None)
    release.set()
    holder.join()


def test_on_the_command_loop_a_locked_board_call_goes_to_a_thread_and_is_made(tmp_path):
    board = Board(tmp_path / "board.sqlite")
    other = sqlite3.connect(tmp_path / "board.sqlite", check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")

    async def start() -> dict | None:
        call = asyncio.create_task(
            offload.board_call(
                board, board.start_run, "r1", video="v", question="q", settings={}, thread_id="r1"
            )
        )
        await asyncio.sleep(0.3)  # the call waits in its thread for the lock
        assert not call.done()
        other.rollback()  # the other process lets go
        await call
        return board.run("r1")

    run = event_loop.run(start())
    assert run is not None and run["status"] == "running"


def test_a_video_probed_before_is_probed_in_place_and_a_changed_one_is_not(tmp_path, needle_video):
    import shutil

    copy = shutil.copy(needle_video.path, tmp_path / "v.mp4")
    assert video.probed(copy) is None
    info = event_loop.run(offload.probe(copy))  # first time: opened in a thread
    assert video.probed(copy) == info and info.duration == 60.0
    with open(copy, "ab") as f:  # another version of the file: probed again
        f.write(b"\0")
    assert video.probed(copy) is None
