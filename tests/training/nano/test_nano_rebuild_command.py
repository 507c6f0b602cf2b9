"""training.nano.rebuild's command line: its first steps, deterministic by seed, and a roles
stage trained on from a given nano."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graphs.runs.traces import read_jsonl
from training.nano.reasoning import HONEST
from training.nano.rebuild import ROLES

ROOT = Path(__file__).resolve().parents[3]


def rebuild(out: Path, *extra: str) -> None:
    command = [
        sys.executable,
        "-m",
        "training.nano.rebuild",
        "--out",
        str(out),
        "--videos",
        "3",
        "--note-seeds",
        "30",
        "--sft-steps",
        "2",
        "--warmup-steps",
        "2",
        "2",
        "--threads",
        "1",
        *(extra or ("--stop-after", "sft")),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory) -> tuple[Path, Path]:
    first, second = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    rebuild(first)
    rebuild(second)
    return first, second


def test_the_rebuild_command_runs_its_first_steps_deterministically(rebuilt):
    first, second = rebuilt
    traces = (first / "data" / "traces.jsonl").read_text().splitlines()
    # per video: 3 questions with tools, 2 other wordings, a verified board; every third
    # question also without tools; the second video also in two-agent mode, the third with
    # the length gate
    assert len(traces) == 3 * (3 + 2 + 1) + 3 + 1 + 1
    tiers = sorted(p.name for p in (first / "data" / "videos").iterdir())
    assert tiers == ["noise-0", "noise-0.5", "noise-1"]
    config = json.loads((first / "init" / "config.json").read_text())
    assert config["model_type"] == "qwen3_vl"
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(first / "sft")
    assert tokenizer.tokenize("<135.0 seconds>")[1] == "135"
    for name in ("init/tokenizer.json", "init/model.safetensors", "sft/model.safetensors"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    assert (first / "sft" / "model.safetensors").read_bytes() != (
        first / "init" / "model.safetensors"
    ).read_bytes()


def test_a_roles_stage_trains_a_given_nano_on_with_its_tokenizer_and_no_warm_up(rebuilt, tmp_path):
    base = rebuilt[0] / "sft"
    out = tmp_path / "roles"
    out.mkdir()
    (out / "data").symlink_to(rebuilt[0] / "data")  # the same data: its stage is skipped
    rebuild(out, "--base", str(base), "--grpo-steps", "0", "--second-looks", "0.5")
    assert not (out / "init").exists()  # no tokenizer of its own
    assert (out / "sft" / "tokenizer.json").read_bytes() == (base / "tokenizer.json").read_bytes()
    weights = (out / "sft" / "model.safetensors").read_bytes()
    assert weights != (base / "model.safetensors").read_bytes()
    log = [json.loads(line) for line in (out / "sft" / "sft.jsonl").read_text().splitlines()]
    assert log[0]["schedule"]["learning_rate"] == ROLES["learning_rate"]
    assert log[1] == {"warm_up": None}
    assert json.loads((out / "timings.json").read_text())["sft"] > 0
    assert not (out / "para_grpo").exists()  # --grpo-steps 0: the SFT checkpoint is the result


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--second-looks", "1.5", "--second-looks 1.5: a share, from 0 to 1"),
        ("--learning-rate", "0", "--learning-rate 0.0: a peak above 0"),
        ("--off-topic", "1.5", "--off-topic 1.5: a share, from 0 to 1"),
    ],
)
def test_a_share_or_rate_out_of_range_is_refused_before_any_work(tmp_path, flag, value, message):
    command = [sys.executable, "-m", "training.nano.rebuild", "--out", str(tmp_path / "x")]
    done = subprocess.run(
        [*command, flag, value], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert message in done.stderr
    assert not (tmp_path / "x").exists()


def test_a_roles_stage_can_continue_a_nano_at_its_own_learning_rate(rebuilt, tmp_path):
    base = rebuilt[0] / "sft"
    out = tmp_path / "continued"
    out.mkdir()
    (out / "data").symlink_to(rebuilt[0] / "data")
    rebuild(out, "--base", str(base), "--grpo-steps", "0", "--learning-rate", "3e-4")
    log = [json.loads(line) for line in (out / "sft" / "sft.jsonl").read_text().splitlines()]
    assert log[0]["schedule"]["learning_rate"] == 3e-4


def test_an_honest_stage_trains_on_off_topic_questions_over_another_stage_s_data(rebuilt, tmp_path):
    """make nano's last stage: --data reuses the roles stage's videos and traces (no data
    stage of its own), and --off-topic adds the graph's traces of questions the videos cannot
    answer, and their note rows, to the rows it trains on."""
    base, shared = rebuilt[0] / "sft", tmp_path / "data"
    shutil.copytree(rebuilt[0] / "data", shared, symlinks=True)
    out = tmp_path / "honest"
    rebuild(
        out, "--base", str(base), "--grpo-steps", "0", "--data", str(shared), "--off-topic", "1"
    )
    assert not (out / "data").exists()
    assert (shared / "traces.jsonl").read_bytes() == (
        rebuilt[0] / "data" / "traces.jsonl"
    ).read_bytes()
    traces = list(read_jsonl(shared / "off_topic-1.jsonl"))
    assert len(traces) == 3  # --off-topic 1: one a video
    assert all(t["status"] == "answered" and t["answer"].startswith(HONEST) for t in traces)
    plain = tmp_path / "plain"
    rebuild(plain, "--base", str(base), "--grpo-steps", "0", "--data", str(shared))
    rows = [
        json.loads((o / "sft" / "sft.jsonl").read_text().splitlines()[0])["rows"]
        for o in (plain, out)
    ]
    assert rows[1] > rows[0], rows


def data_stage(out: Path, data: Path, videos: int) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "training.nano.rebuild", "--out", str(out)]
    command += ["--data", str(data), "--videos", str(videos), "--stop-after", "data"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_a_data_folder_made_for_other_videos_is_refused_not_reused(rebuilt, tmp_path):
    shared = tmp_path / "data"
    shutil.copytree(rebuilt[0] / "data", shared, symlinks=True)
    before = (shared / "traces.jsonl").read_bytes()
    done = data_stage(tmp_path / "x", shared, 4)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "traces.jsonl was made for other questions than this rebuild asks" in done.stderr
    assert "'videos': 3" in done.stderr and "'videos': 4" in done.stderr
    assert (shared / "traces.jsonl").read_bytes() == before, "nothing in it was rewritten"
    (shared / "traces.jsonl.made_for.json").unlink()  # a folder of an older rebuild
    done = data_stage(tmp_path / "x", shared, 3)
    assert done.returncode == 2
    assert "(no record of them): remove it, or give another --data or --out" in done.stderr


def test_traces_made_for_other_wordings_are_refused(rebuilt, tmp_path):
    """A grammar changed since the data stage ran asks other questions of the same videos:
    the traces of the old ones are not trained on as if they were the new ones'."""
    from training.nano import data

    shared = tmp_path / "data"
    shutil.copytree(rebuilt[0] / "data", shared, symlinks=True)
    assert data.build_traces(shared, 3) == shared / "traces.jsonl"  # the same: reused
    fewer = functools.partial(data.jobs_for, phrased=1)
    with pytest.raises(data.StaleTraces, match="made for other questions than this rebuild"):
        data.build_traces(shared, 3, make_jobs=fewer)


def test_shipping_copies_the_checkpoint_and_not_the_build_s_records(rebuilt, tmp_path):
    from training.nano.extend import EXTENDED_FROM
    from training.nano.rebuild import TRAINED_FROM, ship

    checkpoint = tmp_path / "sft"
    shutil.copytree(rebuilt[0] / "sft", checkpoint)
    # a stage trained on from an extended base carries the base's record too (stop 61 found
    # it shipped into assets/)
    (checkpoint / EXTENDED_FROM).write_text('{"base_weights_sha256": "x"}\n')
    assert (checkpoint / TRAINED_FROM).exists()
    shipped = ship(checkpoint, tmp_path / "assets")
    made = {p.name for p in checkpoint.iterdir() if p.is_file()}
    assert {p.name for p in shipped.iterdir()} == made - {TRAINED_FROM, EXTENDED_FROM}
    assert (shipped / "model.safetensors").read_bytes() == (
        checkpoint / "model.safetensors"
    ).read_bytes()
