"""One SFT batch run as groups of rows of similar length: the batch's loss and gradient, with
less padding.

A batch pads every row to its longest. Note-to-answer rows (``training.nano.notes``) run from
about 100 to 630 tokens, so a batch of 32 padded to its longest ran 2.4 times the tokens it
holds (``bench/nano_sft_groups.json``). Sorted by length and cut into groups of at most
``rows_per_group`` rows, each group is padded to its own longest. Each group's loss is
weighted by its share of the batch's token weight (and of its frames, for the frame target)
before its backward pass, so the summed gradient is the gradient of the whole batch's loss.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from training.nano.loss import token_weights, weighted_loss


@dataclass(frozen=True)
class BatchLoss:
    """What one batch scored: the token loss, and the frame target's loss and accuracy when
    its rows have frames."""

    loss: float
    aux: float | None
    accuracy: float | None


def length_groups(lengths: Sequence[int], rows_per_group: int) -> list[list[int]]:
    """Row indices, shortest first, in groups of at most `rows_per_group`.

    >>> length_groups([30, 10, 20, 10], 2)
    [[1, 3], [2, 0]]
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    return [order[i : i + rows_per_group] for i in range(0, len(order), rows_per_group)]


def backward_in_groups(
    model,
    head,
    collate,
    rows: Sequence[dict],
    *,
    content: torch.Tensor,
    content_weight: float,
    aux_weight: float,
    rows_per_group: int,
) -> BatchLoss:
    """Backpropagate the loss of the batch `rows` (``weighted_loss``, plus `aux_weight` times
    the frame target's), one length group at a time."""
    encoded = [collate.encode_row(row) for row in rows]
    parts = []
    for group in length_groups([len(e.input_ids) for e in encoded], rows_per_group):
        batch = collate.pad([encoded[i] for i in group])
        labels = [label for i in group for label in rows[i].get("frame_labels", [])]
        frames = 0
        if labels and "pixel_values" in batch and head is not None:
            batch["frame_labels"] = torch.tensor(labels, dtype=torch.long)
            frames = len(labels)
        weights = token_weights(batch["labels"], content, content_weight)
        parts.append((batch, weights, frames))
    total_weight = max(sum(float(w.sum()) for _, w, _ in parts), 1e-6)
    total_frames = sum(frames for *_, frames in parts)
    loss_sum = aux_sum = right = 0.0
    for batch, weights, frames in parts:
        loss, aux, accuracy = weighted_loss(model, batch, weights, head)
        share = float(weights.sum()) / total_weight
        objective = loss * share
        if aux is not None:
            objective = objective + aux_weight * aux * (frames / total_frames)
            aux_sum += aux.item() * frames
            right += accuracy * frames
        objective.backward()
        loss_sum += loss.item() * share
    if not total_frames:
        return BatchLoss(loss_sum, None, None)
    return BatchLoss(loss_sum, aux_sum / total_frames, right / total_frames)
