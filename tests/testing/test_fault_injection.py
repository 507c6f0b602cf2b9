"""Endpoint faults at 20% (500, 429, hangs, dropped connections, non-JSON 200s) under a real
`app.py eval run`: no fault is ever scored as an answer, and a rerun completes the set."""

from __future__ import annotations

import pytest

from testing.faults import FAULTS, FaultInjector
from testing.scripted import Reply, ScriptedServer
from tests.support.harness import (
    Oracle,
    accounting,
    app_env,
    eval_command,
    log_lines,
    needle_options,
    needle_samples,
    results,
    run_cli,
    run_folder,
)


def test_the_injector_fails_its_share_with_each_kind_in_turn():
    injector = FaultInjector(lambda request: "fine", rate=0.2, seed=1)
    replies = [injector({"messages": []}) for _ in range(1000)]
    faults = [r for r in replies if r != "fine"]
    assert 150 < len(faults) < 250 and injector.passed == 1000 - len(faults)
    assert set(injector.injected) == set(FAULTS)
    assert max(injector.injected.values()) - min(injector.injected.values()) <= 1
    hang = next(r for r in faults if isinstance(r, Reply) and r.delay_s)
    assert hang.text == "fine" and hang.status == 200
    with pytest.raises(ValueError):
        FaultInjector(lambda request: "", rate=1.5)


@pytest.mark.slow
@pytest.mark.integration
def test_faults_at_20_percent_are_never_scored_and_a_rerun_completes_the_set(tmp_path):
    options = needle_options(3)  # 9 samples, four requests each (crop, two sub-agents, answer)
    samples = needle_samples(tmp_path / "data", options)
    injector = FaultInjector(Oracle(samples, crop_first=True), rate=0.2, seed=20, hang_s=2.0)
    env = app_env(tmp_path / "home", PARAVT_REQUEST_TIMEOUT="1")  # a hang times out, retried
    runs = []
    with ScriptedServer(injector) as server:
        command = eval_command(server.base_url, tmp_path / "data", tmp_path / "out", options)
        for _ in range(4):  # the first run, then reruns until every sample is scored
            runs.append(run_cli(command, env))
            if runs[-1].returncode == 0:
                break
            assert runs[-1].returncode == 1, runs[-1].stderr  # 1: some samples are errors
            assert "Traceback" not in runs[-1].stderr
    assert runs[-1].returncode == 0, runs[-1].stderr
    assert set(injector.injected) == set(FAULTS), injector.injected
    folder = run_folder(tmp_path / "out")
    for line in log_lines(folder):
        if line["status"] == "ok":
            assert line["metrics"]["score"] == 1.0, f"a fault became an answer: {line['resps']}"
        else:
            assert line["metrics"] == {} and line["error"].startswith("endpoint: ")
    assert accounting(folder, samples)["lost"] == 0
    assert accounting(folder, samples)["duplicated"] == 0
    done = results(folder)
    assert done["counts"]["scored"] == 9 and done["counts"]["errors"] == 0
    assert done["metrics"]["mc_accuracy"] == 1.0 and done["metrics"]["open_em"] == 1.0
    assert done["metrics"]["grounding_miou"] == pytest.approx(1.0)
