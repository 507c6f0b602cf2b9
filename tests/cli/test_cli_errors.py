"""Bad input to `app.py`: one clear message each, the traceback only under --debug.

Every case runs the CLI's own entry point, against a scripted server on 127.0.0.1 or a port
nobody listens on; the eval case runs `app.py` as a real subprocess to count its lines.
"""

from __future__ import annotations

import os

import pytest

import app
from agents.media import video
from graphs.store.sqlite_board import Board
from serving.launch import free_port
from testing.scripted import Reply, ScriptedServer
from tests.support.app_cli import cli, one_message, question
from tests.support.harness import (
    app_command,
    app_env,
    faststart,
    needle_options,
    record_decodes,
    run_cli,
)

ANSWER = "I see it.</think><answer>A</answer>"


@pytest.fixture(scope="module")
def server():
    with ScriptedServer(ANSWER) as scripted:
        yield scripted


@pytest.fixture
def dead() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


def test_version_is_printed(capsys):
    with pytest.raises(SystemExit) as done:
        app.main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("paravt 0.")


def test_global_flags_work_after_the_command_too(server, needle_video, tmp_path, capsys):
    parser = app.build_parser()
    after = parser.parse_args(["run", "--endpoint", "http://h/v1", "--video", "v", "--question=?"])
    assert after.endpoint == "http://h/v1" and after.home is None and not after.debug
    both = parser.parse_args(["--home", "a", "board", "--home", "b", "--debug"])
    assert str(both.home) == "b" and both.debug, "the flag after the command wins"
    nested = parser.parse_args(["eval", "run", "--task", "needle", "--data-dir", "d", "-v"])
    assert nested.verbose and nested.env_file == ".env"
    code, err = cli(capsys, *question(needle_video.path, tmp_path), "--endpoint", server.base_url)
    assert code == 0, err
    assert Board(tmp_path / "board.sqlite").runs()[0]["status"] == "answered"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--overview-frames", "0"], "argument --overview-frames: must be from 1 to 2048, got 0"),
        (["--max-parallel", "0"], "argument --max-parallel: must be at least 1, got 0"),
        (["--crop-max-frames", "65"], "argument --crop-max-frames: must be from 1 to 64"),
        (["--crop-fps", "-1"], "argument --crop-fps: must be above 0"),
        (["--top-p", "x"], "argument --top-p: 'x' is not a valid float"),
    ],
)
def test_out_of_range_settings_are_refused_by_the_parser(capsys, tmp_path, argv, expected):
    code, err = cli(capsys, *question("v.mp4", tmp_path, *argv))
    assert code == 2 and expected in one_message(err)
    assert len(err.splitlines()) == 2  # the message and where the help is


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--concurrency", "0"], "argument --concurrency: must be at least 1, got 0"),
        (["--limit", "-3"], "argument --limit: must be at least 1"),
        (["--option", "n_videos"], "argument --option: 'n_videos' is not KEY=VALUE"),
    ],
)
def test_bad_eval_arguments_are_refused_by_the_parser(capsys, argv, expected):
    code, err = cli(capsys, "eval", "run", "--task", "needle", "--data-dir", "d", *argv)
    assert code == 2 and expected in one_message(err)


@pytest.mark.slow
@pytest.mark.integration
def test_eval_run_with_the_endpoint_down_prints_one_message(tmp_path, dead):
    """One failure, one message; the retries behind it are shown under -v only."""
    data = tmp_path / "needle"
    argv = ["eval", "run", "--task", "needle", "--data-dir", str(data), "--out", str(tmp_path)]
    argv += [f"--option={k}={v}" for k, v in needle_options(1).items()]
    env = app_env(tmp_path / "home", COLUMNS="400")  # one line per message, unwrapped
    for verbose, shown in ((False, 0), (True, 3)):
        flags = ["-v"] if verbose else []
        done = run_cli(app_command(*argv, *flags, endpoint=dead), env, timeout=120)
        assert done.returncode == 1
        message = one_message(done.stderr)
        assert "connection refused after 4 attempts" in message
        assert "Is the server running?" in message
        retries = [line for line in done.stderr.splitlines() if "retrying in" in line]
        assert len(retries) == shown, done.stderr
    assert len(done.stderr.splitlines()) >= 4  # the verbose run shows its retries


def test_run_with_the_endpoint_down_stops_before_anything_runs(
    capsys, monkeypatch, needle_video, tmp_path, dead
):
    """A configured endpoint that does not answer is one message, before a frame is decoded
    or a run is started (issue 40: it used to decode, then retry twice over)."""
    decoded = record_decodes(monkeypatch)
    code, err = cli(capsys, *question(needle_video.path, tmp_path), "--endpoint", dead)
    assert code == 1
    message = one_message(err)
    assert "connection refused after 4 attempts" in message and "Is the server running?" in message
    assert "retrying in" not in err and "WARNING" not in err  # the retries: under -v
    assert decoded == [] and Board(tmp_path / "board.sqlite").runs() == []


def test_demo_with_the_endpoint_down_says_how_to_fix_it(capsys, tmp_path, dead):
    code, err = cli(capsys, "--endpoint", dead, "--home", str(tmp_path), "demo")
    message = one_message(err)
    assert code == 2 and f"no OpenAI-compatible server answers at {dead}" in message
    assert "app.py serve" in message and "leave out --endpoint" in message


def test_a_missing_or_corrupt_video_is_one_message(capsys, server, tmp_path):
    code, err = cli(capsys, *question("/no/such.mp4", tmp_path), "--endpoint", server.base_url)
    assert code == 2 and "video not found: /no/such.mp4" in one_message(err)
    corrupt = tmp_path / "corrupt.mp4"
    corrupt.write_bytes(os.urandom(20_000))
    code, err = cli(capsys, *question(corrupt, tmp_path), "--endpoint", server.base_url)
    assert code == 2 and "as a video" in " ".join(err.split()) and "Traceback" not in err


def test_a_video_truncated_mid_stream_fails_its_run(capsys, server, needle_video, tmp_path):
    """The index opens, then decoding stops half way: the run ends failed, not running."""
    data = faststart(needle_video.path, tmp_path / "fast.mp4").read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: len(data) // 2])
    video.probe(cut)  # it opens: the failure comes mid-decode
    code, err = cli(capsys, *question(cut, tmp_path), "--endpoint", server.base_url)
    assert code == 2 and "truncated" in " ".join(err.split()) and "Traceback" not in err
    (run,) = Board(tmp_path / "board.sqlite").runs()
    assert run["status"] == "failed" and "VideoError" in run["error"]


def test_a_huge_image_is_one_message(capsys, server, tmp_path):
    import cv2
    import numpy as np

    big = tmp_path / "big.png"
    cv2.imwrite(str(big), np.zeros((9000, 9000), np.uint8))
    code, err = cli(capsys, *question(big, tmp_path), "--endpoint", server.base_url)
    assert code == 2 and "9000x9000" in " ".join(err.split()) and "Traceback" not in err


def test_debug_shows_the_traceback(capsys, tmp_path):
    code, err = cli(capsys, "--debug", *question("/no/such.mp4", tmp_path))
    assert code == 2 and "Traceback" in err and "VideoError" in err


def test_a_missing_data_dir_is_one_message(capsys, server, tmp_path):
    argv = ["--endpoint", server.base_url, "eval", "run", "--task", "videomme"]
    code, err = cli(capsys, *argv, "--data-dir", str(tmp_path / "none"), "--out", str(tmp_path))
    assert code == 2 and "Traceback" not in err and str(tmp_path / "none") in err


def test_a_hanging_endpoint_shows_its_wait_and_names_the_timeout_setting(
    capsys, monkeypatch, needle_video, tmp_path
):
    """A server that never answers used to leave the terminal silent for minutes, then say
    "Raise `timeout`", a setting no user can find (issue 36)."""
    monkeypatch.setenv("PARAVT_REQUEST_TIMEOUT", "1")
    with ScriptedServer(Reply("<answer>A</answer>", delay_s=30)) as hanging:
        code, err = cli(
            capsys, *question(needle_video.path, tmp_path), "--endpoint", hanging.base_url
        )
    said = [" ".join(line.split()) for line in err.splitlines()]
    waits = [line for line in said if "waiting for the endpoint" in line]
    assert [w.split("attempt ")[1].split(",")[0] for w in waits] == ["2 of 4", "3 of 4", "4 of 4"]
    assert all("1 s timeout (PARAVT_REQUEST_TIMEOUT sets it)" in w for w in waits), waits
    assert code == 1 and "Traceback" not in err and "ERROR" not in err
    (failed,) = [line for line in said if " failed: " in line]  # one message
    assert "timed out" in failed and "Raise PARAVT_REQUEST_TIMEOUT" in failed
    assert "resume it with --thread-id" in " ".join(err.split())  # a resume can get past it
