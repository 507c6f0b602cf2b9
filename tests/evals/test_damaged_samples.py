"""A damaged samples.jsonl gets a message and a way out (issue 36): a line without doc_id
used to crash every later `eval run` and `eval rescore` (KeyError), and a duplicate sample id
with another reply silently replaced the first, moving the score. Now both are named, set
aside by the next run into samples.rejected.jsonl and run again; of two replies neither is
chosen."""

from __future__ import annotations

import json

import pytest

from evals.records import REJECTED_FILE
from testing.scripted import ScriptedServer
from tests.support.harness import (
    Oracle,
    accounting,
    app_command,
    app_env,
    eval_command,
    needle_options,
    needle_samples,
    results,
    run_cli,
    run_folder,
)

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def damage(log) -> dict[str, str]:
    """Drop line 1's doc_id, give line 2's sample a second, different reply, add garbage;
    returns {what: sample id}."""
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    no_doc = lines[0].pop("doc_id") is not None and lines[0]["sample_id"]
    other = dict(lines[1], resps=["a different reply"], filtered_resps=["Z"])
    text = "\n".join(json.dumps(x) for x in [*lines, other]) + "\n" + "{not json\n"
    log.write_text(text)
    return {"no_doc_id": no_doc, "conflict": lines[1]["sample_id"]}


def test_damaged_lines_are_named_set_aside_and_run_again(tmp_path):
    options = needle_options(1)
    samples = needle_samples(tmp_path / "data", options)
    env = app_env(tmp_path / "home", COLUMNS="400")
    with ScriptedServer(Oracle(samples)) as server:
        command = eval_command(server.base_url, tmp_path / "data", tmp_path / "out", options)
        assert run_cli(command, env).returncode == 0
        folder = run_folder(tmp_path / "out")
        damaged = damage(folder / "samples.jsonl")

        rescore = run_cli(app_command("eval", "rescore", str(folder), "--profile", "official"), env)
        assert rescore.returncode == 0 and "Traceback" not in rescore.stderr, rescore.stderr
        said = " ".join(rescore.stderr.split())
        assert f"line 1 (sample {damaged['no_doc_id']}): no doc_id" in said
        assert f"(sample {damaged['conflict']}): 2 different replies" in said
        assert "not JSON" in said and "`eval run` with the same options" in said
        rescored = results(folder)
        assert rescored["counts"]["scored"] == len(samples) - 2  # neither reply was chosen

        served = len(server.requests)
        rerun = run_cli(command, env)
    assert rerun.returncode == 0 and "Traceback" not in rerun.stderr, rerun.stderr
    assert "set aside in samples.rejected.jsonl" in " ".join(rerun.stderr.split())
    assert len(server.requests) > served  # the two samples were asked again
    aside = [json.loads(x) for x in (folder / REJECTED_FILE).read_text().splitlines()]
    assert sorted(x["line"] for x in aside) == [1, 2, len(samples) + 1, len(samples) + 2]
    assert all(x["reason"] and x["text"] for x in aside)
    assert accounting(folder, samples) == {
        "samples": len(samples),
        "lost": 0,
        "duplicated": 0,
        "unparseable_lines": 0,
        "error_lines": 0,
    }
    assert results(folder)["counts"]["scored"] == len(samples)


def test_replies_without_metrics_are_scored_again_by_rescore(tmp_path):
    """Rescoring replaces metrics, so a log whose records carry only replies (another tool's,
    or one written before scoring) is scored, not set aside as damaged."""
    options = needle_options(1)
    samples = needle_samples(tmp_path / "data", options)
    env = app_env(tmp_path / "home")
    with ScriptedServer(Oracle(samples)) as server:
        command = eval_command(server.base_url, tmp_path / "data", tmp_path / "out", options)
        assert run_cli(command, env).returncode == 0
    folder = run_folder(tmp_path / "out")
    log = folder / "samples.jsonl"
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    log.write_text(
        "".join(json.dumps({k: v for k, v in x.items() if k != "metrics"}) + "\n" for x in lines)
    )
    rescore = run_cli(app_command("eval", "rescore", str(folder), "--profile", "official"), env)
    assert rescore.returncode == 0 and "not read" not in rescore.stderr, rescore.stderr
    assert results(folder)["counts"]["scored"] == len(samples)
