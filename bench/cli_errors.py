"""What `app.py` prints for each bad input: exit code, stderr lines, tracebacks, the message.

Every case runs the real CLI as a subprocess with a fresh PARAVT_HOME; the endpoint is a
scripted server on 127.0.0.1 (or a free port nobody listens on, for "endpoint down").
Target: one clear message per user error (a few lines), no traceback without --debug.

    python bench/cli_errors.py          # -> bench/cli_errors.json
    python bench/cli_errors.py CASE...  # only these cases, printed
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULT = Path(__file__).with_suffix(".json")


def make_inputs(work: Path) -> dict[str, Path]:
    import cv2
    import numpy as np

    from agents.synthetic import make_video
    from tests.harness import faststart

    good = Path(make_video(work / "good.mp4", seed=1, duration=60.0, fps=4.0).path)
    corrupt = work / "corrupt.mp4"
    corrupt.write_bytes(os.urandom(50_000))
    truncated = work / "truncated.mp4"  # opens (index first), then stops mid-decode
    data = faststart(good, work / "faststart.mp4").read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    big = work / "big.png"
    cv2.imwrite(str(big), np.zeros((9000, 9000, 3), np.uint8))
    return {"good": good, "corrupt": corrupt, "truncated": truncated, "big": big}


def cases(inputs: dict[str, Path], live: str, dead: str, data: Path) -> dict[str, list[str]]:
    run = ["--question", "What is shown?", "--overview-frames", "4", "--max-turns", "1"]
    good = str(inputs["good"])
    no_frames = ["--question=?", "--overview-frames", "0"]
    missing_data = ["--task=videomme", "--data-dir", "/nonexistent"]
    eval_run = ["eval", "run", "--task", "needle", "--data-dir", str(data)]
    eval_run += ["--option=n_videos=1", "--option=max_minutes=1"]
    return {
        "eval_run_endpoint_down": ["--endpoint", dead, *eval_run],
        "run_endpoint_down": ["--endpoint", dead, "run", "--video", good, *run],
        "demo_endpoint_down": ["--endpoint", dead, "demo"],
        "overview_frames_0": ["--endpoint", live, "run", "--video", good, *no_frames],
        "concurrency_0": ["--endpoint", live, *eval_run, "--concurrency", "0"],
        "endpoint_after_subcommand": ["run", "--endpoint", live, "--video", good, *run],
        "version": ["--version"],
        "missing_video": ["--endpoint", live, "run", "--video", "/nonexistent.mp4", *run],
        "corrupt_video": ["--endpoint", live, "run", "--video", str(inputs["corrupt"]), *run],
        "truncated_video": ["--endpoint", live, "run", "--video", str(inputs["truncated"]), *run],
        "image_9000x9000": ["--endpoint", live, "run", "--video", str(inputs["big"]), *run],
        "eval_missing_data_dir": ["--endpoint", live, "eval", "run", *missing_data],
        "eval_bad_option": ["--endpoint", live, *eval_run, "--option", "n_videos"],
    }


def run_case(argv: list[str], home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARAVT_")}
    env.update(PARAVT_HOME=str(home), OMP_NUM_THREADS="1", COLUMNS="100")
    command = [sys.executable, str(ROOT / "app.py"), "--env-file", "", *argv]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=60, check=False
        )
    except subprocess.TimeoutExpired:
        return {"exit_code": None, "hung": True, "timeout_s": 60}
    err = done.stderr.strip().splitlines()
    board = home / "board.sqlite"
    statuses = {}
    if board.exists():
        with sqlite3.connect(board) as conn:
            statuses = dict(conn.execute("select status, count(*) from runs group by status"))
    return {
        "exit_code": done.returncode,
        "stderr_lines": len(err),
        "tracebacks": done.stderr.count("Traceback (most recent call last)"),
        "first_line": err[0][:160] if err else "",
        "last_line": err[-1][:160] if err else "",
        "stdout": done.stdout.strip()[:160],
        "board_statuses": statuses,
    }


def main() -> None:
    from serving.launch import free_port
    from serving.scripted import ScriptedServer

    work = Path(tempfile.mkdtemp(prefix="paravt-cli-errors-"))
    inputs = make_inputs(work)
    dead = f"http://127.0.0.1:{free_port()}/v1"
    only = set(sys.argv[1:])
    report = {}
    with ScriptedServer("I see it.</think><answer>A</answer>") as server:
        for name, argv in cases(inputs, server.base_url, dead, work / "needle").items():
            if only and name not in only:
                continue
            report[name] = run_case(argv, work / f"home-{name}")
            print(name, json.dumps(report[name]), flush=True)
    if not only:
        RESULT.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
