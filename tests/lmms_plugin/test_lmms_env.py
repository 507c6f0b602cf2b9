"""The lmms-eval environment (`make lmms-env`): the pitfalls its install command handles, the
plugin registered, and lmms-eval 0.7.3's own scoring equal to this project's lmms_eval
profiles (tests/lmms_plugin/lmms_env_check.py, run by that environment's python)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LMMS_VENV = Path(os.environ.get("PARAVT_LMMS_VENV", ROOT / ".venv-lmms"))


@pytest.fixture(scope="module")
def report() -> dict:
    python = LMMS_VENV / "bin" / "python"
    if not python.exists():
        why = f"no lmms-eval environment at {LMMS_VENV}: `make lmms-env` makes it"
        if os.environ.get("PARAVT_LMMS_REQUIRED") == "1":
            pytest.fail(f"{why} (PARAVT_LMMS_REQUIRED=1: CI must install it, see .ci/run)")
        pytest.skip(why)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [str(python), str(ROOT / "tests/lmms_plugin/lmms_env_check.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_install_command_leaves_out_torchvision_and_holds_filelock_below_4(report):
    assert report["lmms_eval"] == "0.7.3"
    assert report["torchvision"] is False
    assert int(report["filelock"].split(".")[0]) < 4 and report["filelock_api"]


def test_lmms_eval_finds_paravt_through_the_entry_point(report):
    assert report["paravt"] == [
        "lmms_plugin.model.ParaVT",
        "lmms_plugin.model.ParaVTSimple",
        "ParaVT",
        "ParaVTSimple",
    ]


@pytest.mark.parametrize(("task", "items"), [("videomme", 804), ("lvbench", 804), ("mlvu", 804)])
def test_lmms_evals_released_scoring_agrees_with_the_lmms_eval_profiles(report, task, items):
    assert report["agreement"][task] == {"items": items, "agree": items}
