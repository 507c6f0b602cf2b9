"""A samples.jsonl cut mid-line by a crash: the sample counts as missing, is redone, never glued."""

from __future__ import annotations

import json

import pytest

from evals.records import TORN_FILE, SampleLog
from testing.scripted import ScriptedServer
from tests.support.harness import (
    Oracle,
    accounting,
    app_env,
    eval_command,
    needle_options,
    needle_samples,
    results,
    run_cli,
    run_folder,
)


def record(sample_id: str, **extra) -> dict:
    return {"sample_id": sample_id, "status": "ok", **extra}


def tear(path, keep_of_last_line: float = 0.5) -> str:
    """Cut the file inside its last line; returns the id of the sample that line held."""
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    last = data[start:]
    path.write_bytes(data[: start + int(len(last) * keep_of_last_line)])
    return json.loads(last)["sample_id"]


def test_a_torn_last_line_is_missing_repaired_aside_and_never_glued_onto(tmp_path):
    log = SampleLog(tmp_path)
    for i in range(3):
        log.append(record(f"s{i}", text="x" * 200))
    assert tear(log.path) == "s2"
    assert set(log.read()) == {"s0", "s1"}, "the torn sample is missing until redone"
    again = SampleLog(tmp_path)  # the next run
    again.append(record("s2", text="redone"))
    lines = log.path.read_text().splitlines()
    assert [json.loads(line)["sample_id"] for line in lines] == ["s0", "s1", "s2"]
    assert again.read()["s2"]["text"] == "redone"
    assert (tmp_path / TORN_FILE).read_bytes().startswith(b'{"sample_id": "s2"')


def test_a_last_line_missing_only_its_newline_is_torn_too(tmp_path):
    log = SampleLog(tmp_path)
    log.append(record("s0"))
    log.path.write_bytes(log.path.read_bytes() + json.dumps(record("s1")).encode())
    assert set(log.read()) == {"s0"}
    assert log.repair() > 0 and log.repair() == 0
    assert log.path.read_bytes().endswith(b"\n") and set(log.read()) == {"s0"}


def test_unreadable_lines_inside_the_log_are_skipped(tmp_path):
    log = SampleLog(tmp_path)
    log.path.write_text('{"sample_id": "s0", "status": "ok"}\n{"sample_id": "s1", "st\n[1, 2]\n')
    assert set(log.read()) == {"s0"}


@pytest.mark.slow
@pytest.mark.integration
def test_the_cli_resumes_a_torn_log_with_every_sample_exactly_once(tmp_path):
    options = needle_options(3)
    samples = needle_samples(tmp_path / "data", options)
    with ScriptedServer(Oracle(samples)) as server:
        command = eval_command(server.base_url, tmp_path / "data", tmp_path / "out", options)
        first = run_cli(command, app_env(tmp_path / "home"))
        assert first.returncode == 0, first.stderr
        folder = run_folder(tmp_path / "out")
        torn_id = tear(folder / "samples.jsonl")
        served = len(server.requests)
        rerun = run_cli(command, app_env(tmp_path / "home"))
    assert rerun.returncode == 0, rerun.stderr
    assert len(server.requests) > served, "the torn sample was run again"
    assert accounting(folder, samples) == {
        "samples": 9,
        "lost": 0,
        "duplicated": 0,
        "unparseable_lines": 0,
        "error_lines": 0,
    }
    assert torn_id in (folder / TORN_FILE).read_text()
    done = results(folder)
    assert done["counts"]["scored"] == 9 and done["metrics"]["mc_accuracy"] == 1.0
