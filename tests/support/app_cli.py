"""`app.main` in this process: its exit code and stderr, the one error message in it, and a
`run` command line; shared by the tests of what a user sees when something goes wrong."""

from __future__ import annotations

import app


def cli(capsys, *argv: str) -> tuple[int, str]:
    """(exit code, stderr) of app.main, with argparse's own exits caught."""
    try:
        code = app.main(["--env-file", "", *argv])
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def one_message(err: str) -> str:
    """The one error message in stderr (rich wraps it to the width; it is unwrapped here)."""
    assert "Traceback" not in err
    assert err.count("error:") == 1, err
    return " ".join(err[err.index("error:") :].split())


def question(video_path, home, *more: str) -> list[str]:
    """`--home HOME run --video V --question What? --overview-frames 4 MORE...`"""
    run = ["run", "--video", str(video_path), "--question", "What?", "--overview-frames", "4"]
    return ["--home", str(home), *run, *more]
