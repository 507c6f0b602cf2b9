"""A killed SFT goes on from its last resume point and ends bit-identical to a run that was
never stopped; a resume point from other settings is refused, not mixed in."""

import json
import shutil
from dataclasses import dataclass

import pytest
import torch
from transformers import AutoTokenizer

from training.nano import rebuild, resume, train

ARGS = [
    "--videos",
    "3",
    "--note-seeds",
    "30",
    "--warmup-steps",
    "2",
    "2",
    "--threads",
    "1",
    "--stop-after",
    "sft",
    "--resume-every",
    "1",
]


class Killed(Exception):
    pass


def build(out, steps=3):
    return rebuild.main(["--out", str(out), "--sft-steps", str(steps), *ARGS])


def kill_at(monkeypatch, at):
    """Kill SFT as it starts step `at` (after the resume point of step `at`)."""
    real = train.learning_rate

    def rate(peak, step, steps, warmup_steps):
        if step == at:
            raise Killed
        return real(peak, step, steps, warmup_steps)

    monkeypatch.setattr(train, "learning_rate", rate)


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    out = tmp_path_factory.mktemp("straight")
    assert build(out) == 0
    return out


def resumable(straight, tmp_path):
    """A build folder whose data and init are the straight run's, SFT not yet run."""
    for stage in ("data", "init"):
        shutil.copytree(straight / stage, tmp_path / stage)
    return tmp_path


def test_a_killed_sft_resumes_and_ends_as_if_never_stopped(straight, tmp_path, monkeypatch):
    out = resumable(straight, tmp_path)
    kill_at(monkeypatch, 2)
    with pytest.raises(Killed):
        build(out)
    assert (out / "sft" / resume.STATE).exists()
    assert not (out / "sft" / "model.safetensors").exists()
    monkeypatch.undo()
    calls = []
    monkeypatch.setattr(train, "warm_up", lambda *a, **k: calls.append(a))
    assert build(out) == 0
    assert calls == []  # the warm-ups' result is in the saved weights, not run again
    weights = "sft/model.safetensors"
    assert (out / weights).read_bytes() == (straight / weights).read_bytes()
    assert not (out / "sft" / resume.STATE).exists()
    logged = [json.loads(line) for line in (out / "sft" / "sft.jsonl").read_text().splitlines()]
    assert [sorted(line) for line in logged] == [["rows", "schedule"], ["warm_up"]]


@dataclass(frozen=True)
class WithClaims(train.SFTSchedule):
    claim_weight: float = 1.0  # the verifier's claim target on (training.nano.claims)
    main_share: float = 0.0  # verifier batches only, so that the target trains at every step
    notes_share: float = 0.0
    verify_share: float = 1.0


def test_a_killed_sft_with_the_claim_target_resumes_its_claim_head_too(
    straight, tmp_path, monkeypatch
):
    monkeypatch.setattr(train, "SFTSchedule", WithClaims)
    whole = resumable(straight, tmp_path / "whole")
    assert build(whole) == 0
    out = resumable(straight, tmp_path / "killed")
    with monkeypatch.context() as killing:
        kill_at(killing, 2)
        with pytest.raises(Killed):
            build(out)
    state = torch.load(out / "sft" / resume.STATE, weights_only=False)
    assert {"frame.weight", "claim.weight", "claim.bias"} <= set(state["heads"])
    # the claim head trained: AdamW keeps moments for its weight and bias, the last parameters
    # of the two groups (weights that decay, and the rest)
    trained = state["optimizer"]["state"]
    assert all(group["params"][-1] in trained for group in state["optimizer"]["param_groups"])
    assert build(out) == 0
    weights = "sft/model.safetensors"
    assert (out / weights).read_bytes() == (whole / weights).read_bytes()


def test_the_verifier_target_flags_set_the_sft_schedule_and_are_off_by_default(straight, tmp_path):
    out = resumable(straight, tmp_path)
    flags = ["--claim-weight", "2", "--time-weight", "0.5"]
    assert rebuild.main(["--out", str(out), "--sft-steps", "1", *flags, *ARGS]) == 0

    def schedule(folder):
        return json.loads((folder / "sft" / "sft.jsonl").read_text().splitlines()[0])["schedule"]

    assert (schedule(out)["claim_weight"], schedule(out)["time_weight"]) == (2.0, 0.5)
    assert (schedule(straight)["claim_weight"], schedule(straight)["time_weight"]) == (0.0, 0.0)


def header(folder):
    return json.loads((folder / "sft" / "sft.jsonl").read_text().splitlines()[0])


def test_the_shares_flag_sets_the_batch_mix(straight, tmp_path):
    out = resumable(straight, tmp_path)
    flags = ["--shares", "0.1", "0.6", "0.2"]
    assert rebuild.main(["--out", str(out), "--sft-steps", "1", *flags, *ARGS]) == 0
    shares = ("main_share", "notes_share", "verify_share")
    assert [header(out)["schedule"][k] for k in shares] == [0.1, 0.6, 0.2]
    assert [header(straight)["schedule"][k] for k in shares] == [
        getattr(train.SFTSchedule, k) for k in shares
    ]
    assert header(out)["rows"] == header(straight)["rows"]


@pytest.mark.parametrize("shares", [["0.5", "0.4", "0.2"], ["-0.1", "0.6", "0.2"]])
def test_shares_that_cannot_be_a_mix_are_refused_before_anything_runs(tmp_path, capsys, shares):
    with pytest.raises(SystemExit) as exited:
        rebuild.main(["--out", str(tmp_path / "out"), "--shares", *shares, *ARGS])
    assert exited.value.code == 2 and "add up to at most 1" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "flags",
    [["--every-needle-grounded"], ["--phrased", "4"]],
    ids=["a grounding row for every needle", "four everyday questions per plan"],
)
def test_the_note_row_flags_add_rows(straight, tmp_path, flags):
    out = resumable(straight, tmp_path)
    assert rebuild.main(["--out", str(out), "--sft-steps", "1", *flags, *ARGS]) == 0
    assert header(out)["rows"] > header(straight)["rows"]


def test_the_spaced_seconds_flag_gives_the_base_whole_spaced_seconds(straight, tmp_path):
    shutil.copytree(straight / "data", tmp_path / "data")
    base = ["--base", str(straight / "sft"), *ARGS, "--stop-after", "init"]
    assert rebuild.main(["--out", str(tmp_path), "--spaced-seconds", *base]) == 0
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "init")
    pieces = tokenizer.tokenize("from 94 to 99")
    assert " 94" in pieces and " 99" in pieces
    plain = tmp_path / "plain"
    shutil.copytree(straight / "data", plain / "data")
    assert rebuild.main(["--out", str(plain), *base]) == 0
    assert not (plain / "init").exists()  # the base already spells every verdict whole


def test_an_init_without_the_spaced_seconds_is_refused_not_reused(straight, tmp_path, capsys):
    shutil.copytree(straight / "data", tmp_path / "data")
    (tmp_path / "init").mkdir()
    for name in ("model.safetensors", "tokenizer.json", "tokenizer_config.json", "config.json"):
        shutil.copy(straight / "sft" / name, tmp_path / "init" / name)
    with pytest.raises(SystemExit) as exited:
        rebuild.main(
            [
                "--out",
                str(tmp_path),
                "--spaced-seconds",
                "--base",
                str(straight / "sft"),
                *ARGS,
                "--stop-after",
                "init",
            ]
        )
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "lacks 601 of these" in err and "remove it" in err


def test_the_sub_agent_spelling_flag_trains_on_the_respelt_rows(straight, tmp_path, monkeypatch):
    from training.nano import spelling

    respelt = []  # (ids before, ids after) of each row the SFT step respelt
    real = spelling.respell

    def recording(encoded, pairs):
        after = real(encoded, pairs)
        respelt.append((encoded.input_ids, after.input_ids))
        return after

    monkeypatch.setattr(spelling, "respell", recording)
    shutil.copytree(straight / "data", tmp_path / "data")
    flags = ["--spaced-seconds", "--sub-agent-base-spelling", "--base", str(straight / "sft")]
    only_sub_agent = ["--shares", "0", "0", "0"]  # every batch a sub-agent batch
    argv = ["--out", str(tmp_path), "--sft-steps", "1", *flags, *only_sub_agent, *ARGS]
    assert rebuild.main(argv) == 0
    assert header(tmp_path)["schedule"]["sub_agent_base_spelling"] is True
    assert respelt and any(len(after) > len(before) for before, after in respelt)

    respelt.clear()
    plain = tmp_path / "plain"
    shutil.copytree(straight / "data", plain / "data")
    argv = ["--out", str(plain), "--sft-steps", "1", "--spaced-seconds", "--base"]
    assert rebuild.main([*argv, str(straight / "sft"), *only_sub_agent, *ARGS]) == 0
    assert header(plain)["schedule"]["sub_agent_base_spelling"] is False and not respelt


def test_the_sub_agent_spelling_without_spaced_seconds_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        rebuild.main(["--out", str(tmp_path / "out"), "--sub-agent-base-spelling", *ARGS])
    assert exited.value.code == 2 and "give it --spaced-seconds" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_spaced_seconds_without_a_base_is_refused_before_anything_runs(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        rebuild.main(["--out", str(tmp_path / "out"), "--spaced-seconds", *ARGS])
    assert exited.value.code == 2 and "give it --base" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@dataclass(frozen=True)
class WithTimes(WithClaims):
    time_weight: float = 1.0  # and the frame-time target (training.nano.frame_times)
    log_every: int = 1


def test_sft_with_the_frame_time_target_trains_and_logs_it(straight, tmp_path, monkeypatch):
    monkeypatch.setattr(train, "SFTSchedule", WithTimes)
    out = resumable(straight, tmp_path)
    assert build(out, steps=2) == 0
    logged = [json.loads(line) for line in (out / "sft" / "sft.jsonl").read_text().splitlines()]
    steps = [line for line in logged if "step" in line]
    assert [line["step"] for line in steps] == [1, 2]
    assert all(line["time"] > 0 and 0 <= line["time_acc"] <= 1 for line in steps), steps


def test_a_resume_point_from_other_settings_is_refused(straight, tmp_path, monkeypatch, capsys):
    out = resumable(straight, tmp_path)
    kill_at(monkeypatch, 1)
    with pytest.raises(Killed):
        build(out)
    monkeypatch.undo()
    with pytest.raises(SystemExit) as exited:
        build(out, steps=4)
    assert exited.value.code == 2
    assert "delete it to start SFT over" in capsys.readouterr().err
    assert (out / "sft" / resume.STATE).exists()  # nothing already done is lost


def test_a_finished_sft_of_another_schedule_is_refused_not_shipped(
    straight, tmp_path, monkeypatch, capsys
):
    out = resumable(straight, tmp_path)
    shutil.copytree(straight / "sft", out / "sft")

    def no_training(*args, **kwargs):
        raise AssertionError("a finished stage of the same start and schedule is reused")

    monkeypatch.setattr(train, "train_sft", no_training)
    assert build(out) == 0  # the straight run's own stage
    with pytest.raises(SystemExit) as exited:
        build(out, steps=4)
    assert exited.value.code == 2
    assert "trained from another start or schedule" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # the same schedule on other rows (more off-topic ones)
        rebuild.main(["--out", str(out), "--sft-steps", "3", *ARGS, "--off-topic", "1"])
    assert "trained from another start or schedule" in capsys.readouterr().err
    (out / "sft" / rebuild.TRAINED_FROM).unlink()  # a stage that does not say what it was
    with pytest.raises(SystemExit):  # trained from is not taken on trust
        build(out)
    assert (out / "sft" / "model.safetensors").exists()  # nothing already done is lost


def test_an_unreadable_resume_point_is_refused_with_what_to_do(tmp_path):
    (tmp_path / resume.STATE).write_bytes(b"not a torch file")
    with pytest.raises(resume.ResumeRefused, match=r"cannot be read.*delete it"):
        resume.load(tmp_path, {})


def test_a_resume_point_of_an_older_version_is_refused_with_what_to_do(tmp_path):
    torch.save({"step": 1, "identity": {}, "head": {}}, tmp_path / resume.STATE)
    with pytest.raises(resume.ResumeRefused, match=r"older version.*delete it"):
        resume.load(tmp_path, {})


def test_the_log_keeps_headers_and_steps_up_to_the_resume_point(tmp_path):
    log = tmp_path / "sft.jsonl"
    log.write_text('{"schedule": {}}\n{"warm_up": {}}\n{"step": 20}\n{"step": 40}\n')
    resume.trim_log(log, 20)
    assert log.read_text() == '{"schedule": {}}\n{"warm_up": {}}\n{"step": 20}\n'


def test_the_polish_is_the_second_rebuild_it_stands_for(straight, tmp_path):
    """`--polish-steps N --polish-shares ...` after SFT trains what a second rebuild from that
    SFT's checkpoint with those steps and shares trains, on the same rows: the same schedule,
    and the same weights up to float rounding (a second training in one process need not
    round as a fresh process does; at full scale the two drift apart, docs/nano.md)."""
    from safetensors.torch import load_file

    one, two = tmp_path / "one", tmp_path / "two"
    for out in (one, two):
        shutil.copytree(straight / "data", out / "data")
    base = ["--base", str(straight / "sft")]
    polish = ["--polish-steps", "2", "--polish-shares", "0.1", "0.6", "0.2"]
    flags = ["--sft-steps", "1", *base, *polish, *ARGS, "--stop-after", "polish"]
    assert rebuild.main(["--out", str(one), *flags]) == 0
    then = ["--base", str(one / "sft"), "--sft-steps", "2", "--shares", "0.1", "0.6", "0.2"]
    assert rebuild.main(["--out", str(two), *then, *ARGS]) == 0
    polished = json.loads((one / "polish" / "sft.jsonl").read_text().splitlines()[0])
    assert polished["schedule"] == header(two)["schedule"]
    assert polished["rows"] == header(two)["rows"]
    weights = [
        load_file(f / "model.safetensors") for f in (one / "polish", two / "sft", one / "sft")
    ]
    moved = max((weights[0][k] - weights[2][k]).abs().max().item() for k in weights[0])
    apart = max((weights[0][k] - weights[1][k]).abs().max().item() for k in weights[0])
    assert apart < 1e-5 < moved


@pytest.mark.parametrize(
    "flags", [["--polish-steps", "5"], ["--polish-shares", "0.1", "0.6", "0.2"]]
)
def test_a_polish_flag_without_the_other_is_refused_before_anything_runs(tmp_path, capsys, flags):
    with pytest.raises(SystemExit) as exited:
        rebuild.main(["--out", str(tmp_path / "out"), *flags, *ARGS])
    assert exited.value.code == 2 and "go together" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
