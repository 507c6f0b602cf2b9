"""PARA-GRPO math: group advantages, the clipped token-level loss, nFrames gating, the arms."""

from __future__ import annotations

import dataclasses
import doctest
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

from agents.prompts import forced_answer_text
from agents.protocol import THINK_PREFIX
from training import advantages, gating, loss, para_grpo
from training.advantages import group_advantages, rewards_tensor
from training.gating import FRAME_CHOICES, draw_frames
from training.loss import kl_k3, policy_loss
from training.para_grpo import ARMS, ArmSpec, ParaGRPOConfig


@pytest.mark.parametrize("module", [advantages, loss, gating, para_grpo])
def test_doctests_pass(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# --- group advantages -------------------------------------------------------------------


def test_group_advantages_by_hand():
    rewards = torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 2.0, 2.0]])
    std0 = math.sqrt((1.5**2 + 0.5**2 + 0.5**2 + 1.5**2) / 4)  # population std, 1.1180
    expected = torch.tensor([[-1.5, -0.5, 0.5, 1.5], [-1.0, -1.0, 1.0, 1.0]])
    assert torch.allclose(group_advantages(rewards, scale_std=False), expected)
    scaled = group_advantages(rewards, eps=0.0)
    assert torch.allclose(scaled[0], expected[0] / std0)
    assert torch.allclose(scaled[1], expected[1])  # std 1
    assert torch.allclose(scaled.mean(dim=1), torch.zeros(2), atol=1e-6)


def test_identical_rewards_give_exact_zeros():
    rewards = torch.tensor([[0.1] * 8, [1 / 3] * 8, [2.8] * 8])
    for scale in (True, False):
        assert torch.equal(group_advantages(rewards, scale_std=scale), torch.zeros(3, 8))


def test_unjudged_rollouts_are_left_out():
    nan = float("nan")
    rewards = torch.tensor([[2.0, nan, 0.0, 1.0], [nan, 1.0, nan, nan], [nan] * 4])
    got = group_advantages(rewards, scale_std=False)
    assert torch.equal(got, torch.tensor([[1.0, 0.0, -1.0, 0.0], [0.0] * 4, [0.0] * 4]))
    assert not torch.isnan(group_advantages(rewards)).any()


def test_rewards_tensor():
    got = rewards_tensor([1.0, None, 0.5, 0.5], group_size=2)
    assert got.shape == (2, 2) and math.isnan(got[0, 1])
    with pytest.raises(ValueError):
        rewards_tensor([1.0, 2.0, 3.0], group_size=2)
    with pytest.raises(ValueError):
        group_advantages(torch.zeros(8))


# --- the loss -----------------------------------------------------------------------------

LOGP = [[-1.0, -0.5, -2.0], [-0.3, -1.2, -0.7]]
OLD = [[-1.0, -0.7, -1.5], [-0.3, -1.0, -0.2]]  # log-ratios 0, .2, -.5 / 0, -.2, -.5
ADV = [1.0, -2.0]
MASK = [[1, 1, 1], [1, 1, 0]]  # the last token of row 2 is a tool response


def _loss(logp=None, **kwargs):
    logp = torch.tensor(LOGP, requires_grad=True) if logp is None else logp
    out = policy_loss(logp, torch.tensor(OLD), torch.tensor(ADV), torch.tensor(MASK), **kwargs)
    return logp, *out


def test_loss_2x3_by_hand():
    e = math.exp
    # Row 1, A = +1: ratio 1 -> 1; ratio e^.2 = 1.221 > 1.2 -> clipped to 1.2;
    #   ratio e^-.5 = 0.607 < 0.8 but A > 0, so min(0.607, 0.8) = 0.607 (unclipped).
    # Row 2, A = -2: ratio 1 -> -2; ratio e^-.2 = 0.819 inside [0.8, 1.2] -> -1.637;
    #   the masked token (ratio 0.607, A < 0, would be clipped) counts for nothing.
    objective = 1.0 + 1.2 + e(-0.5) + -2.0 + -2.0 * e(-0.2)
    logp, value, stats = _loss()
    assert value.item() == pytest.approx(-objective / 5, abs=1e-6)
    assert stats.tokens == 5
    assert stats.clip_fraction == 0.2  # exactly one of five trained tokens
    assert stats.ratio_mean == pytest.approx((1 + e(0.2) + e(-0.5) + 1 + e(-0.2)) / 5, abs=1e-6)
    assert stats.kl_mean == 0.0
    value.backward()
    # d loss / d logp = -A * ratio / 5 on unclipped trained tokens, 0 when clipped or masked
    expected = [[-0.2, 0.0, -e(-0.5) / 5], [2 / 5, 2 * e(-0.2) / 5, 0.0]]
    assert torch.allclose(logp.grad, torch.tensor(expected), atol=1e-6)


def test_masked_tokens_contribute_nothing():
    _, reference, _ = _loss()
    for poison in (float("nan"), float("-inf"), 50.0):
        logp = torch.tensor(LOGP)
        logp[1, 2] = poison
        logp.requires_grad_(True)
        _, value, stats = _loss(logp, ref_logp=torch.full((2, 3), -1.0))
        _, plain, _ = _loss(torch.tensor(LOGP), ref_logp=torch.full((2, 3), -1.0))
        assert value.item() == pytest.approx(plain.item()) and not math.isnan(stats.kl_mean)
        value.backward()
        assert logp.grad[1, 2] == 0.0 and not torch.isnan(logp.grad).any()
    assert _loss()[1].item() == pytest.approx(reference.item())


def test_kl_is_zero_when_policy_equals_reference():
    _, plain, _ = _loss()
    _, value, stats = _loss(ref_logp=torch.tensor(LOGP))
    assert stats.kl_mean == 0.0 and value.item() == pytest.approx(plain.item())


def test_kl_k3_by_hand():
    logp, ref = torch.tensor([[-1.0, -2.0]]), torch.tensor([[-1.5, -1.0]])
    k3 = [math.exp(-0.5) + 0.5 - 1, math.exp(1.0) - 1.0 - 1]
    assert torch.allclose(kl_k3(logp, ref), torch.tensor([k3]))
    assert (kl_k3(torch.randn(100), torch.randn(100)) >= 0).all()
    # In the loss: k3 enters as kl_coef * mean, its gradient is (1 - exp(ref - logp)) * coef / N.
    x = logp.clone().requires_grad_(True)
    value, stats = policy_loss(x, x.detach(), torch.zeros(1), torch.ones(1, 2), ref_logp=ref)
    assert stats.kl_mean == pytest.approx(sum(k3) / 2)
    assert value.item() == pytest.approx(0.01 * sum(k3) / 2)
    value.backward()
    expected = [(1 - math.exp(-0.5)) * 0.01 / 2, (1 - math.exp(1.0)) * 0.01 / 2]
    assert torch.allclose(x.grad, torch.tensor([expected]))


def test_loss_normaliser_token_advantages_and_empty_mask():
    _, value, _ = _loss()
    _, global_count, _ = _loss(num_tokens=10)  # the whole batch, under gradient accumulation
    assert global_count.item() == pytest.approx(value.item() / 2)
    per_token = torch.tensor(ADV)[:, None].expand(2, 3)
    same = policy_loss(torch.tensor(LOGP), torch.tensor(OLD), per_token, torch.tensor(MASK))[0]
    assert same.item() == pytest.approx(value.item())
    x = torch.zeros(2, 3, requires_grad=True)
    empty, stats = policy_loss(x, torch.zeros(2, 3), torch.ones(2), torch.zeros(2, 3))
    empty.backward()
    assert empty.item() == 0.0 and stats.tokens == 0 and torch.equal(x.grad, torch.zeros(2, 3))


# --- nFrames gating -----------------------------------------------------------------------


def test_draw_frames_is_deterministic_and_shared_by_a_group():
    draws = {draw_frames("videomme/042-1") for _ in range(8)}
    assert len(draws) == 1
    config = ParaGRPOConfig()
    assert len({config.rollout_context("videomme/042-1").overview_frames for _ in range(8)}) == 1


def test_draw_frames_does_not_depend_on_the_process():
    ids = [f"prompt-{i}" for i in range(50)]
    here = [draw_frames(i) for i in ids]
    code = f"from training.gating import draw_frames; print([draw_frames(i) for i in {ids!r}])"
    for salt in ("1", "2"):
        env = {"PYTHONHASHSEED": salt, "PATH": ""}
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            cwd=Path(__file__).parents[2],
            check=True,
        )
        assert out.stdout.strip() == str(here)


def test_draw_frames_is_uniform():
    n, k = 5000, len(FRAME_CHOICES)
    counts = Counter(draw_frames(f"prompt-{i}") for i in range(n))
    chi2 = sum((counts[c] - n / k) ** 2 / (n / k) for c in FRAME_CHOICES)
    assert set(counts) == set(FRAME_CHOICES)
    assert chi2 < 18.47  # chi-square, 4 degrees of freedom, p = 0.001


def test_seed_and_epoch_redraw():
    ids = [f"prompt-{i}" for i in range(500)]
    base = [draw_frames(i) for i in ids]
    for other in ([draw_frames(i, seed=1) for i in ids], [draw_frames(i, epoch=1) for i in ids]):
        changed = sum(a != b for a, b in zip(base, other, strict=True)) / len(ids)
        assert 0.7 < changed < 0.9  # 4/5 expected for independent draws
    assert draw_frames("x", choices=(7,)) == 7
    with pytest.raises(ValueError):
        draw_frames("x", choices=())


# --- arms and config -----------------------------------------------------------------------

ARM_TABLE = {  # think prefix, answer suffix, anchor, gating
    "grpo": (False, False, False, False),
    "anchoring": (True, True, True, False),
    "gating": (False, False, False, True),
    "para_grpo": (True, True, True, True),
}


def test_arm_registry():
    assert {name: dataclasses.astuple(spec) for name, spec in ARMS.items()} == ARM_TABLE
    assert all(isinstance(spec, ArmSpec) for spec in ARMS.values())
    with pytest.raises(ValueError, match="unknown arm"):
        ParaGRPOConfig(arm="dapo")  # type: ignore[arg-type]


@pytest.mark.parametrize("arm", sorted(ARM_TABLE))
def test_arms_drive_prefix_suffix_anchor_and_gating(arm):
    prefix, suffix, anchor, gate = ARM_TABLE[arm]
    config = ParaGRPOConfig(arm=arm)
    settings = config.reward_settings()
    assert settings.prefill == (THINK_PREFIX if prefix else None)
    assert config.rollout_context("q").think_prefix is prefix
    assert settings.answer_suffix is suffix
    assert config.answer_suffix("grounding") == (
        forced_answer_text("grounding") if suffix else None
    )
    assert settings.lambda_anchor == (0.5 if anchor else 0.0)
    frames = {config.overview_frames(f"q{i}") for i in range(100)}
    assert frames == (set(FRAME_CHOICES) if gate else {64})


def test_config_defaults_and_help():
    config = ParaGRPOConfig()
    assert (config.group_size, config.temperature, config.max_new_tokens) == (8, 0.7, 2048)
    assert (config.learning_rate, config.clip_eps, config.grad_clip, config.kl_coef) == (
        2e-6,
        0.2,
        1.0,
        0.01,
    )
    assert (config.lambda_fmt, config.lambda_anchor) == (1.0, 0.5)
    assert all(f.metadata.get("help") for f in dataclasses.fields(ParaGRPOConfig))
    context = config.rollout_context("q", epoch=3)
    assert (context.temperature, context.max_new_tokens) == (0.7, 2048)
    with pytest.raises(ValueError):
        ParaGRPOConfig(group_size=1)


def test_departures_are_documented():
    doc = para_grpo.__doc__
    for term in (
        "Think Prefix",
        "Answer Suffix",
        "anchor",
        "nFrames Gating",
        "masked",
        "Token-level",
        "KL coefficient 0.01",
        "cannot be judged",
        "release",
    ):
        assert term in doc, term
    source = Path(para_grpo.__file__).read_text()
    assert "arm ==" not in source and "elif" not in source  # arms are a registry, not branches
