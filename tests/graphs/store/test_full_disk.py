"""Damaged state gets a message and a way out (issue 36): a disk that fills up mid-run stops it
cleanly (the computed answer is shown, the thread resumes once there is space), `board` on a
full disk and a corrupt board file are one message each, never a traceback.

The disk is a small tmpfs where the machine lets the tests mount one (root); elsewhere every
SQLite write of the board and the checkpointer raises SQLite's own "database or disk is
full" once the disk is declared full.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from graphs.store.sqlite_board import Board
from testing.scripted import ScriptedServer, role_of, turn_of
from tests.support.app_cli import cli, one_message
from tests.support.fakes import calls

_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "ALTER", "PRAGMA USER_VERSION")


class Disk:
    """A folder on a small disk that `fill` fills up and `free` empties: a 4 MB tmpfs where
    the machine lets the tests mount one, else SQLite connections whose every write (and
    commit) raises SQLite's own "database or disk is full" while the disk is declared full."""

    def __init__(self, root: Path, monkeypatch) -> None:
        self.root = root
        self.mounted = (
            subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(root)],
                capture_output=True,
                check=False,
            ).returncode
            == 0
        )
        self.full = False
        if not self.mounted:
            connect = sqlite3.connect
            monkeypatch.setattr(
                sqlite3, "connect", lambda *a, **k: connect(*a, **k, factory=_connection(self))
            )

    def fill(self) -> None:
        self.full = True
        if self.mounted:
            with open(self.root / "filler", "wb") as filler:
                try:
                    while True:
                        filler.write(b"\0" * 65536)
                        filler.flush()
                except OSError:
                    pass

    def refuse(self, sql: str) -> None:
        if self.full and " ".join(sql.split()).upper().startswith(_WRITES):
            raise sqlite3.OperationalError("database or disk is full")

    def free(self) -> None:
        self.full = False
        (self.root / "filler").unlink(missing_ok=True)

    def unmount(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.root)], check=False)


def _connection(disk: Disk) -> type[sqlite3.Connection]:
    """A connection class that writes only while `disk` has room."""

    class Cursor(sqlite3.Cursor):
        def execute(self, sql, *args):
            disk.refuse(sql)
            return super().execute(sql, *args)

        def executemany(self, sql, *args):
            disk.refuse(sql)
            return super().executemany(sql, *args)

    class Connection(sqlite3.Connection):
        def cursor(self, factory=Cursor):
            return super().cursor(factory)

        def execute(self, sql, *args):
            return self.cursor().execute(sql, *args)

        def executemany(self, sql, *args):
            return self.cursor().executemany(sql, *args)

        def commit(self):
            if disk.full and self.in_transaction:
                raise sqlite3.OperationalError("database or disk is full")
            return super().commit()

    return Connection


@pytest.fixture
def disk(tmp_path, monkeypatch):
    root = tmp_path / "disk"
    root.mkdir()
    small = Disk(root, monkeypatch)
    yield small
    small.unmount()


def test_a_disk_that_fills_mid_run_stops_it_cleanly_and_the_thread_resumes(
    capsys, disk, needle_video
):
    filled = []

    def reply(body):
        if role_of(body) == "main" and turn_of(body):
            if not filled:  # the sub-agents' notes are in; the answer is on its way
                filled.append(disk.fill())
            return "The note says red.</think><answer>A</answer>"
        if "crop_video" in str(body["messages"][0]):
            return calls((0, 10), (10, 20))[len("<think>") :]
        return "a red circle"

    home = disk.root / "home"
    argv = ["--home", str(home), "run", "--video", needle_video.path, "--question", "Colour?"]
    argv += ["--overview-frames", "4", "--thread-id", "T"]
    with ScriptedServer(reply) as server:
        code, err = cli(capsys, "--endpoint", server.base_url, *argv)
        said = " ".join(err.split())
        assert code == 1 and "Traceback" not in err, err
        assert f"no space left on the disk holding {home}" in said
        assert "computed its answer, 'A', which is not stored" in said
        assert "resume it with --thread-id T" in said
        assert len([line for line in err.splitlines() if "WARNING" in line]) == 0
        disk.free()
        asked = len(server.requests)
        code, err = cli(capsys, "--endpoint", server.base_url, *argv)
    assert code == 0 and "answer 'A' (answered)" in err, err
    assert len(server.requests) - asked <= 1  # resumed: only the unsaved last turn again
    (run,) = Board(home / "board.sqlite").runs()
    assert run["status"] == "answered" and run["thread_id"] == "T"


def test_board_on_a_full_disk_is_one_message(capsys, disk, needle_video):
    home = disk.root / "home"
    Board(home / "board.sqlite").close()
    disk.fill()
    code, err = cli(capsys, "--home", str(home), "board")
    assert code == 2 and f"no space left on the disk holding {home}" in one_message(err)
    assert "free some space" in one_message(err)


def test_a_corrupt_board_is_named_with_how_to_move_it_aside(capsys, tmp_path):
    board = tmp_path / "board.sqlite"
    board.write_bytes(b"not a database, " * 400)
    code, err = cli(capsys, "--board-db", str(board), "board")
    message = one_message(err)
    assert code == 2 and f"the board file {board} is damaged" in message
    assert f"mv {board} {board}.damaged" in message
    shutil.move(board, f"{board}.damaged")  # as the message says
    code, err = cli(capsys, "--board-db", str(board), "board")
    assert code == 0 and "error" not in err


def test_a_corrupt_checkpoint_file_is_named_too(capsys, tmp_path, needle_video):
    checkpoints = tmp_path / "checkpoints.sqlite"
    checkpoints.write_bytes(b"\x00garbage" * 500)
    with ScriptedServer("ok</think><answer>A</answer>") as server:
        code, err = cli(
            capsys,
            "--home",
            str(tmp_path),
            "--endpoint",
            server.base_url,
            "run",
            "--video",
            needle_video.path,
            "--question",
            "Colour?",
        )
    message = one_message(err)
    assert code == 2 and f"the checkpoints file {checkpoints} is damaged" in message
    assert f"mv {checkpoints} {checkpoints}.damaged" in message
