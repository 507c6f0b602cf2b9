"""Token-level clipped policy loss (PPO/GRPO surrogate) with an optional k3 KL penalty.

Per trained token t of rollout i (``mask`` 1; prompt, prefill and tool-response tokens 0):

    ratio  = exp(logp - old_logp)
    obj    = min(ratio * A_i, clip(ratio, 1 - eps, 1 + eps) * A_i)
    kl     = exp(ref - logp) - (ref - logp) - 1          (k3, Schulman; >= 0)
    loss   = sum_t mask * (-obj + beta * kl) / number of mask-1 tokens in the batch

Token-level averaging (DAPO; TRL's ``loss_type="dapo"``/"bnpo" family) weighs every
trained token alike, so a long rollout is not down-weighted as GRPO's per-sequence mean
does. Under gradient accumulation pass ``num_tokens``, the count over the whole batch, so
micro-batches add up to the same loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

CLIP_EPS = 0.2
KL_COEF = 0.01


@dataclass(frozen=True)
class LossStats:
    """Diagnostics over the trained tokens (detached floats)."""

    clip_fraction: float  # share of tokens whose clipped branch is taken (zero gradient)
    kl_mean: float  # mean k3 to the reference (0.0 without one)
    ratio_mean: float
    tokens: int


def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(policy || reference) from samples of the policy.

    >>> kl_k3(torch.tensor([-1.0, -2.0]), torch.tensor([-1.0, -1.0]))
    tensor([0.0000, 0.7183])
    """
    delta = ref_logp - logp
    return torch.exp(delta) - delta - 1.0


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_eps: float = CLIP_EPS,
    ref_logp: torch.Tensor | None = None,
    kl_coef: float = KL_COEF,
    num_tokens: int | float | None = None,
) -> tuple[torch.Tensor, LossStats]:
    """The loss above for ``[B, T]`` log-probs of the sampled tokens and ``[B]`` (or ``[B, T]``)
    advantages. ``old_logp`` and ``ref_logp`` are treated as constants. Masked tokens add
    nothing to the loss or the gradient, even when their log-probs are inf or NaN.

    >>> logp = torch.zeros(1, 2, requires_grad=True)
    >>> loss, stats = policy_loss(logp, torch.zeros(1, 2), torch.tensor([2.0]),
    ...                           torch.tensor([[1, 0]]))
    >>> loss.item(), stats.tokens, stats.clip_fraction
    (-2.0, 1, 0.0)
    """
    trained = mask.bool()
    if advantages.ndim == 1:
        advantages = advantages[:, None]
    adv = advantages.detach().expand_as(logp)
    zero = torch.zeros_like(logp)
    logp = torch.where(trained, logp, zero)  # masked inf/NaN never reach exp or backward
    log_ratio = logp - torch.where(trained, old_logp.detach(), zero)
    ratio = torch.exp(log_ratio)
    clipped_ratio = ratio.clamp(1.0 - clip_eps, 1.0 + clip_eps)
    per_token = -torch.minimum(ratio * adv, clipped_ratio * adv)
    kl = zero
    if ref_logp is not None:
        kl = kl_k3(logp, torch.where(trained, ref_logp.detach(), zero))
        per_token = per_token + kl_coef * kl
    count = int(trained.sum())
    denom = float(num_tokens) if num_tokens is not None else max(count, 1)
    loss = torch.where(trained, per_token, zero).sum() / denom

    with torch.no_grad():
        clipped = ((ratio < 1 - clip_eps) & (adv < 0)) | ((ratio > 1 + clip_eps) & (adv > 0))
        n = max(count, 1)
        stats = LossStats(
            clip_fraction=float((clipped & trained).sum()) / n,
            kl_mean=float(torch.where(trained, kl, zero).sum()) / n,
            ratio_mean=float(torch.where(trained, ratio, zero).sum()) / n,
            tokens=count,
        )
    return loss, stats
