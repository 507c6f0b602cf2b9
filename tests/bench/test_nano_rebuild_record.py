"""bench/nano_rebuild.py: the rebuild's record, read from a build folder in the real formats."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from tests.support.bench_scripts import BENCH, load_bench

TIME_REPORT = """\tCommand being timed: "python -m training.nano.rebuild --out x"
\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:52:30
\tMaximum resident set size (kbytes): 2501234
"""


def build_folder(root: Path) -> Path:
    """A build folder as ``training.nano.rebuild`` leaves it, with tiny weights."""
    root.mkdir()
    (root / "timings.json").write_text(json.dumps({"data": 480.0, "sft": 6000.0, "grpo": 6700.0}))
    sft = root / "sft"
    sft.mkdir(parents=True)
    schedule = {"copy_warmup_steps": 300, "vision_warmup_steps": 600}
    warm = {
        "copy_loss": [5.3, 0.2],
        "copy_s": 140.0,
        "frame_accuracy": [0.6, 0.98],
        "vision_s": 130.0,
    }
    steps = [
        {"step": 20, "loss_main": 1.0, "elapsed_s": 18.0},
        {"step": 40, "loss_main": 0.5, "loss_sub": 0.7, "aux_acc": 0.99, "elapsed_s": 36.0},
    ]
    lines = [{"schedule": schedule, "rows": 10}, {"warm_up": warm}, *steps]
    (sft / "sft.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for seed, folder in enumerate(
        (sft, root / "grpo" / "checkpoint", root / "para_grpo" / "checkpoint")
    ):
        folder.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(seed)
        save_file({"a": torch.randn(3, 4), "b": torch.randn(5)}, folder / "model.safetensors")
    for arm, seconds in (("grpo", (9.0, 11.0, 10.0)), ("para_grpo", (12.0, 10.0))):
        rows = [{"step": k, "step_time_s": s} for k, s in enumerate(seconds)]
        (root / arm / "grpo.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_the_record_reads_each_stage_from_the_build_folders_own_logs(tmp_path):
    rebuild = load_bench("nano_rebuild")
    out = build_folder(tmp_path / "build")
    report = rebuild.record(out, TIME_REPORT, "the command")
    assert report["seconds_at_end_of"] == {"data": 480.0, "sft": 6000.0, "grpo": 6700.0}
    assert report["total_minutes_wall"] == 112.5 and report["peak_rss_gb"] == 2.5
    assert report["sft"]["steps"] == 40 and report["sft"]["seconds_per_step"] == 0.9
    assert report["sft"]["final_losses"] == {"main": 0.5, "sub": 0.7, "frame_target_accuracy": 0.99}
    assert report["warm_up"]["copy_loss_first_last"] == [5.3, 0.2]
    assert report["grpo_arms"]["grpo"] == {
        "steps": 3,
        "median_step_seconds": 10.0,
        "sum_of_step_seconds": 30.0,
    }
    shipped = (out / "para_grpo" / "checkpoint" / "model.safetensors").read_bytes()
    assert report["parameters"] == 3 * 4 + 5 and report["checkpoint_bytes"] == len(shipped)
    assert report["weights_sha256_prefix"]["para_grpo"] == hashlib.sha256(shipped).hexdigest()[:12]
    assert len(set(report["weights_sha256_prefix"].values())) == 3


def test_a_roles_stage_is_recorded_without_warm_ups_or_arms(tmp_path):
    """``--base ... --grpo-steps 0``: no warm-up line, no GRPO arms; the result is SFT's."""
    rebuild = load_bench("nano_rebuild")
    out = build_folder(tmp_path / "build")
    for arm in ("grpo", "para_grpo"):
        shutil.rmtree(out / arm)
    log = out / "sft" / "sft.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join([lines[0], json.dumps({"warm_up": None}), *lines[2:]]) + "\n")
    report = rebuild.record(out, TIME_REPORT, "the command")
    sft = (out / "sft" / "model.safetensors").read_bytes()
    assert report["warm_up"] is None and report["grpo_arms"] == {}
    assert report["weights_sha256_prefix"] == {"sft": hashlib.sha256(sft).hexdigest()[:12]}
    assert report["checkpoint_bytes"] == len(sft)
    assert report["sft"]["rows"] == 10 and report["sft"]["schedule"]["copy_warmup_steps"] == 300


def test_a_report_that_is_not_from_time_v_is_refused():
    with pytest.raises(ValueError, match="/usr/bin/time -v"):
        load_bench("nano_rebuild").time_log("real 1m2s\n")


def test_a_build_without_timings_gets_one_line_saying_what_to_do(tmp_path):
    log = tmp_path / "time.log"
    log.write_text(TIME_REPORT)
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "nano_rebuild.py"),
            "--out",
            str(tmp_path / "none"),
            "--time-log",
            str(log),
            "--json",
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "timings.json: missing; run the whole rebuild under /usr/bin/time -v" in done.stderr
