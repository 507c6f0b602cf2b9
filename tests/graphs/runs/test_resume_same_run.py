"""Resume means the same run (issue 36): a thread id named with another question, video or
settings is refused with what differs, `--new-thread` starts that thread over, and the
"resume it" hint appears only after a failure a resume can get past."""

from __future__ import annotations

import shutil

import pytest

from graphs.store.sqlite_board import Board
from testing.scripted import Reply, ScriptedServer
from tests.support.app_cli import cli, one_message, question

ANSWER = "I see it.</think><answer>A</answer>"


@pytest.fixture
def server():
    with ScriptedServer(ANSWER) as scripted:
        yield scripted


def run(capsys, video, home, endpoint, *more):
    return cli(capsys, *question(video, home, "--endpoint", endpoint, "--thread-id", "T", *more))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (["--question", "Which shape?"], "the question ('What?' then, 'Which shape?' now)"),
        (["--overview-frames", "8"], "the settings: overview_frames (4 then, 8 now)"),
        (["--option", "A. red", "--option", "B. blue"], "the options ([] then"),
        (["--video", "OTHER"], "the video ("),
    ],
)
def test_a_thread_named_with_another_question_is_refused(
    capsys, server, needle_video, tmp_path, change, named
):
    code, err = run(capsys, needle_video.path, tmp_path, server.base_url)
    assert code == 0, err
    asked = len(server.requests)
    other = tmp_path / "other.mp4"
    shutil.copy(needle_video.path, other)
    change = [str(other) if word == "OTHER" else word for word in change]
    code, err = run(capsys, needle_video.path, tmp_path, server.base_url, *change)
    message = one_message(err)
    assert code == 2 and "thread T is another run" in message and named in message, message
    assert "leave out --thread-id" in message and "--new-thread" in message
    assert len(server.requests) == asked  # nothing was asked, nothing answered from T
    assert len(Board(tmp_path / "board.sqlite").runs()) == 1


def test_the_same_run_returns_its_answer_and_new_thread_starts_over(
    capsys, server, needle_video, tmp_path
):
    assert run(capsys, needle_video.path, tmp_path, server.base_url)[0] == 0
    asked = len(server.requests)
    code, err = run(capsys, needle_video.path, tmp_path, server.base_url)
    assert code == 0 and "answer 'A'" in err and len(server.requests) == asked  # the same run
    code, err = run(
        capsys, needle_video.path, tmp_path, server.base_url, "--question", "Which?", "--new-thread"
    )
    assert code == 0, err
    runs = Board(tmp_path / "board.sqlite").runs()
    assert [r["question"] for r in runs] == ["Which?", "What?"]  # newest first; both kept
    assert {r["thread_id"] for r in runs} == {"T"}


def test_the_resume_hint_follows_only_failures_a_resume_can_fix(capsys, needle_video, tmp_path):
    script = [Reply(status=503, text="overloaded")] * 4 + [ANSWER]
    with ScriptedServer(script) as flaky:
        code, err = run(capsys, needle_video.path, tmp_path, flaky.base_url)
        assert code == 1 and "resume it with --thread-id T" in " ".join(err.split())
        code, err = run(capsys, needle_video.path, tmp_path, flaky.base_url)
        assert code == 0 and "answer 'A'" in err  # the resume got past it
    with ScriptedServer(Reply(status=400, text="the request is too long")) as refusing:
        code, err = cli(
            capsys, *question(needle_video.path, tmp_path / "b", "--endpoint", refusing.base_url)
        )
    assert code == 1 and "too long" in err and "resume it" not in err
