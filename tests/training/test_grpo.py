"""The CPU GRPO engine end to end on the tiny Qwen3-VL: arms, log fields, learning, plots."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from graphs.context import Context  # noqa: E402
from serving.engine import GenerationSettings, LocalVLM  # noqa: E402
from training import cpu_grpo as grpo  # noqa: E402
from training import plot  # noqa: E402
from training.cpu_grpo import GRPOEngine, RunConfig, parse_args  # noqa: E402
from training.para_grpo import ARMS, ParaGRPOConfig  # noqa: E402
from training.recording import token_logprobs  # noqa: E402
from training.rollout import OBJECTIVES, RLPrompt, Trajectory, Turn  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LOG_FIELDS = {
    "step",
    "arm",
    "objective",
    "reward",
    "reward_total",
    "accuracy",
    "format",
    "tool",
    "f_tau",
    "kappa",
    "calls_per_rollout",
    "calls_emitted",
    "turns_per_rollout",
    "response_length",
    "overview_frames",
    "answered",
    "failed",
    "loss",
    "clip_fraction",
    "kl",
    "ratio_mean",
    "logprob_gap",
    "grad_norm",
    "trained_tokens",
    "rollouts",
    "lr",
    "time_rollout_s",
    "time_reward_s",
    "time_update_s",
    "step_time_s",
}
TINY_FLAGS = [
    "--n-videos",
    "1",
    "--video-seconds",
    "20",
    "--prompts-per-step",
    "2",
    "--group-size",
    "3",
    "--max-new-tokens",
    "8",
    "--frame-choices",
    "1",
    "2",
    "--full-frames",
    "2",
    "--overview-max-pixels",
    "4096",
    "--crop-max-frames",
    "2",
    "--crop-max-pixels",
    "4096",
    "--summary-max-tokens",
    "8",
    "--max-turns",
    "1",
    "--learning-rate",
    "1e-3",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from serving.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    from training.rollout import needle_prompts

    folder = tmp_path_factory.mktemp("needles")
    needle_prompts(folder, n_videos=2, duration=20.0)
    return folder


def read_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("arm", sorted(ARMS))
def test_every_arm_trains_end_to_end_from_one_flag(arm, model_dir, data_dir, tmp_path):
    out = tmp_path / arm
    argv = ["--arm", arm, "--model", str(model_dir), "--out", str(out), "--data", str(data_dir)]
    assert grpo.main([*argv, *TINY_FLAGS, "--steps", "2"]) == 0
    lines = read_log(out / "grpo.jsonl")
    assert [line["step"] for line in lines] == [0, 1] and {line["arm"] for line in lines} == {arm}
    for line in lines:
        assert set(line) == LOG_FIELDS, "every documented field, nothing else"
        assert line["rollouts"] == 6 and line["trained_tokens"] > 0
        assert line["logprob_gap"] < 1e-3, "sampling log-probs = recomputed ones"
        assert 0.0 <= line["kappa"] <= 1.0 and line["f_tau"] is not None
        if not ARMS[arm].nframes_gating:
            assert line["overview_frames"] == 2.0, "--full-frames without gating"
        assert 1.0 <= line["overview_frames"] <= 2.0
    vlm = LocalVLM(out / "checkpoint")  # what `python -m serving.server --model` loads
    prompt = vlm.build_prompt([{"role": "user", "content": "hi"}], [])
    assert vlm.generate(prompt, GenerationSettings(max_tokens=3, temperature=0.0)).token_ids


def test_a_step_changes_the_weights_and_a_flat_batch_does_not(model_dir, data_dir, tmp_path):
    run = RunConfig(model=str(model_dir), out=str(tmp_path), data=str(data_dir))
    engine = GRPOEngine(run, ParaGRPOConfig(group_size=2, kl_coef=0.0, learning_rate=1e-2))
    tok = engine.vlm.tokenizer
    prompt_ids = tuple(tok("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")["input_ids"])
    item = RLPrompt("p", "v", "q", (), "open_ended", "x")

    def turn(agent, completion):
        with torch.no_grad():
            old = token_logprobs(
                engine.vlm, engine.policy, prompt_ids, completion, {}, temperature=0.7
            ).tolist()
        role = "main" if agent == "main" else "sub_agent"
        return Turn(agent, role, 0, prompt_ids, completion, tuple(old), {}, 0.7)

    def traj(completion, advantage):
        trace = {"tool_calls": [], "status": "answered", "model_calls": []}
        main, sub = turn("main", completion), turn("sub:0:0", (3, 4, 5, 6))
        return Trajectory(item, 0, Context(), trace, [main], [sub], advantage=advantage)

    before = [p.detach().clone() for p in engine.policy.parameters()]
    flat = engine.update([traj((5, 6, 7), 0.0), traj((8, 9), 0.0)])
    assert flat["trained_tokens"] == 5 and flat["grad_norm"] == 0.0
    assert all(torch.equal(a, b) for a, b in zip(before, engine.policy.parameters(), strict=True))
    stats = engine.update([traj((5, 6, 7), 1.0), traj((8, 9), -1.0)])
    assert stats["grad_norm"] > 0 and stats["logprob_gap"] < 1e-5 and stats["ratio_mean"] == 1.0
    assert any(
        not torch.equal(a, b) for a, b in zip(before, engine.policy.parameters(), strict=True)
    )
    engine.algo = replace(engine.algo, train_subagents=True)  # sub-agent turns join the loss
    assert engine.update([traj((5, 6, 7), 0.0), traj((8, 9), 0.0)])["trained_tokens"] == 5 + 8
    engine.close()


@pytest.mark.slow
def test_reward_rises_on_an_easy_objective(model_dir, data_dir, tmp_path):
    """The untrained model's noise varies in its share of even token ids within a group, so
    GRPO has signal from step 0; within 24 steps the share climbs well above chance."""
    run = RunConfig(
        model=str(model_dir),
        out=str(tmp_path),
        data=str(data_dir),
        steps=24,
        prompts_per_step=2,
        objective="even_tokens",
    )
    algo = ParaGRPOConfig(
        arm="para_grpo",
        group_size=4,
        max_new_tokens=16,
        learning_rate=1e-2,
        frame_choices=(2, 4),
        full_frames=4,
        kl_coef=0.01,
    )
    context = Context(
        overview_max_pixels=4096,
        crop_max_frames=2,
        crop_max_pixels=4096,
        summary_max_tokens=8,
        max_turns=1,
    )
    rewards = [line["reward"] for line in read_log(grpo.train(run, algo, context))]
    first, last = sum(rewards[:5]) / 5, sum(rewards[-5:]) / 5
    print(f"even-token share: first 5 steps {first:.3f}, last 5 steps {last:.3f}")
    assert last > first + 0.2 and last > 0.75


def test_objectives_table():
    item = RLPrompt("p", "v", "q", (), "open_ended", "x")

    def traj(*turn_ids):
        turns = [
            Turn("main", "main", i, (1,), ids, (0.0,) * len(ids), {}, 1.0)
            for i, ids in enumerate(turn_ids)
        ]
        return Trajectory(item, 0, Context(max_new_tokens=4), {}, turns, [])

    cases = [
        ("even_tokens", traj((2, 4, 5, 7)), 0.5),
        ("even_tokens", traj((2,), (4, 6)), 1.0),
        ("even_tokens", traj(), None),
        ("brevity", traj((1, 2)), 0.5),
        ("brevity", traj((1, 2, 3, 4), (1, 2)), 0.25),
        ("paravt", traj((1,)), None),  # not scored yet
    ]
    for name, t, expected in cases:
        assert OBJECTIVES[name](t) == expected, name


def test_cli_help_is_the_field_help(model_dir, tmp_path):
    run, algo, context = parse_args(
        [
            "--model",
            "m",
            "--out",
            "o",
            "--arm",
            "gating",
            "--frame-choices",
            "4",
            "8",
            "--max-turns",
            "2",
            "--no-train-subagents",
            "--temperature",
            "0.9",
        ]
    )
    assert (run.model, algo.arm, algo.frame_choices) == ("m", "gating", (4, 8))
    assert (context.max_turns, algo.temperature, algo.train_subagents) == (2, 0.9, False)
    for owned_by_the_arm in ("--think-prefix", "--overview-frames=8", "--top-p=0.9"):
        with pytest.raises(SystemExit):
            parse_args(["--model", "m", "--out", "o", owned_by_the_arm])
    helped = subprocess.run(
        [sys.executable, "-m", "training.cpu_grpo", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert helped.returncode == 0
    text = " ".join(helped.stdout.split())
    snippets = (
        "Rollouts per prompt (G).",
        "What advantages come from.",
        "--objective",
        "Most frames per window",
        "--arm {grpo,anchoring,gating,para_grpo}",
    )
    for snippet in snippets:
        assert snippet in text, snippet


def test_plot_writes_a_png(tmp_path):
    for arm in ("grpo", "para_grpo"):
        rows = [
            {"step": s, "arm": arm, "f_tau": s / 10, "kappa": None if s == 0 else 0.1 * s}
            for s in range(6)
        ]
        (tmp_path / arm).mkdir()
        (tmp_path / arm / "grpo.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "fig" / "curves.png"
    logs = [str(tmp_path / arm / "grpo.jsonl") for arm in ("grpo", "para_grpo")]
    assert plot.main([*logs, "--out", str(out), "--smooth", "3"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    assert plot.trailing_mean([None, 1.0, 3.0], 5) == [None, 1.0, 2.0]
