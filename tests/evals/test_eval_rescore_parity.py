"""`app.py eval rescore` on one finished run gives, for each profile, the number that profile's
reference harness printed for the same replies (tests/data/parity)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evals.records import SampleLog, sample_to_json
from evals.spec import EvalSpec
from tests.parity.data import reference
from tests.support.reference_samples import videomme_sample

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A Video-MME run folder whose samples hold the corpus replies, as a run writes them."""
    spec = EvalSpec(task="videomme", data_dir="/data/Video-MME", model="m", context={})
    folder = spec.folder(tmp_path_factory.mktemp("runs"))
    folder.mkdir(parents=True)
    (folder / "spec.json").write_text(json.dumps(spec.to_json()))
    log = SampleLog(folder)
    for doc_id, item in enumerate(reference("videomme_official")["items"]):
        sample = videomme_sample(item["doc"])
        log.append(
            {
                "doc_id": doc_id,
                "sample_id": sample.id,
                "target": sample.target,
                "status": "ok",
                "error": None,
                "resps": [item["reply"]],
                "sample": sample_to_json(sample),
                "metrics": {},
            }
        )
    return folder


def rescore(folder: Path, profile: str) -> dict:
    done = subprocess.run(
        [sys.executable, "app.py", "eval", "rescore", str(folder), "--profile", profile],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads((folder / f"results_{profile}.json").read_text())


def test_each_profile_gives_its_reference_number(finished_run):
    log_before = (finished_run / "samples.jsonl").read_bytes()
    official = rescore(finished_run, "official")["metrics"]["overall"]
    assert (
        f"{official:.1f}"
        == reference("videomme_official")["aggregate"]["all"]["overall"]["Overall"]
    )
    readme = rescore(finished_run, "official_readme")["metrics"]["overall"]
    printed = reference("videomme_official_readme")["aggregate"]["all"]["overall"]["Overall"]
    assert f"{readme:.1f}" == printed
    for profile, commit in (("lmms_eval", "75571cf"), ("lmms_eval_2c08ee5", "2c08ee5")):
        got = rescore(finished_run, profile)["metrics"]["videomme_perception_score"]
        assert (
            got
            == reference(f"videomme_lmms_eval_{commit}")["aggregate"]["videomme_perception_score"]
        )
    assert (finished_run / "samples.jsonl").read_bytes() == log_before  # replies kept as run
