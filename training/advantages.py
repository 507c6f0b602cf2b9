"""Group-relative advantages: each rollout's reward against the other rollouts of its prompt."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch


def group_advantages(
    rewards: torch.Tensor, *, scale_std: bool = True, eps: float = 1e-6
) -> torch.Tensor:
    """Advantages for rewards shaped ``[n_groups, G]`` (G rollouts of one prompt per row).

    A = r - mean(group), divided by (std(group) + eps) when ``scale_std`` (GRPO; Dr. GRPO
    drops the division). The std is the population std (divides by G, not G - 1, so G = 1
    is defined). NaN marks a rollout that could not be judged: it is left out of its group's
    mean and std and gets advantage 0. A group whose judged rewards are all equal (or that
    has fewer than two) gets exactly 0 for every rollout: it carries no learning signal.

    >>> group_advantages(torch.tensor([[1.0, 0.0], [2.0, 2.0]]))
    tensor([[ 1.0000, -1.0000],
            [ 0.0000,  0.0000]])
    >>> group_advantages(torch.tensor([[3.0, 1.0, float("nan")]]), scale_std=False)
    tensor([[ 1., -1.,  0.]])
    """
    if rewards.ndim != 2:
        raise ValueError(f"rewards must be [n_groups, G], got shape {tuple(rewards.shape)}")
    judged = ~torch.isnan(rewards)
    r = torch.where(judged, rewards, torch.zeros_like(rewards))
    count = judged.sum(dim=1, keepdim=True).clamp(min=1)
    mean = r.sum(dim=1, keepdim=True) / count
    centred = torch.where(judged, r - mean, torch.zeros_like(r))
    if scale_std:
        std = (centred.pow(2).sum(dim=1, keepdim=True) / count).sqrt()
        centred = centred / (std + eps)
    lo = torch.where(judged, r, torch.full_like(r, math.inf)).amin(dim=1, keepdim=True)
    hi = torch.where(judged, r, torch.full_like(r, -math.inf)).amax(dim=1, keepdim=True)
    flat = (lo >= hi) | (count < 2)  # identical rewards: exact zeros, not 1e-9 noise
    return torch.where(flat | ~judged, torch.zeros_like(centred), centred)


def rewards_tensor(rewards: Sequence[float | None], group_size: int) -> torch.Tensor:
    """Rewards in rollout order (a prompt's G rollouts adjacent) -> ``[n_groups, G]``, None ->
    NaN.

    >>> rewards_tensor([1.0, None, 0.5, 0.5], 2)
    tensor([[1.0000,    nan],
            [0.5000, 0.5000]])
    """
    if group_size < 1 or len(rewards) % group_size:
        raise ValueError(f"{len(rewards)} rewards do not split into groups of {group_size}")
    values = [math.nan if r is None else float(r) for r in rewards]
    return torch.tensor(values, dtype=torch.float32).view(-1, group_size)
