"""One SFT batch run as groups of rows of similar length: the batch's loss and gradient, with
less padding.

A batch pads every row to its longest. Note-to-answer rows (``training.nano.notes``) run from
about 100 to 630 tokens, so a batch of 32 padded to its longest ran 2.4 times the tokens it
holds (``bench/nano_sft_groups.json``). Sorted by length and cut into groups of at most
``rows_per_group`` rows, each group is padded to its own longest. Each group's loss is
weighted by its share of the batch's token weight (and of its frames, for the frame target)
before its backward pass, so the summed gradient is the gradient of the whole batch's loss.
The verifier's claim target (``training.nano.claims``) is weighted the same way, by its share
of the weight of the batch's targets (``claims.claim_weights``).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import NamedTuple

import torch

from training.nano import frame_times
from training.nano.claims import LAYER, ClaimTargets, claim_loss, claim_weights, tap_layer
from training.nano.frame_times import FrameTimes, NoteLookups, position_loss, time_readout
from training.nano.loss import token_weights, weighted_loss


@dataclass(frozen=True)
class BatchLoss:
    """What one batch scored: the token loss, the frame target's loss and accuracy when its
    rows have frames, and the claim target's when they have notes to check."""

    loss: float
    aux: float | None
    accuracy: float | None
    claim: float | None = None
    claim_accuracy: float | None = None
    time: float | None = None
    time_accuracy: float | None = None
    lookup: float | None = None
    lookup_accuracy: float | None = None


@dataclass(frozen=True)
class ClaimCheck:
    """The verifier's targets in a batch. The claim target: its head, its labeller, its weight,
    the weight of a fact that does not hold against one that does (``claims.claim_weights``),
    and the decoder layer whose output it reads. With `times`, the frame-time target
    (``frame_times``) at `time_weight`, read after decoder layer `time_layer` and scored
    against `time_head`'s rows when given (``frame_times.time_readout``). With `lookups`,
    what the frame each of the note's times names shows (``frame_times.NoteLookups``), read
    after `layer` by `lookup_head`, at `lookup_weight`."""

    head: torch.nn.Module
    targets: ClaimTargets
    weight: float
    wrong_weight: float = 1.0
    layer: int = LAYER
    times: FrameTimes | None = None
    time_weight: float = 0.0
    time_layer: int = frame_times.LAYER
    time_head: torch.nn.Module | None = None
    lookups: NoteLookups | None = None
    lookup_head: torch.nn.Module | None = None
    lookup_weight: float = 0.0


class _Group(NamedTuple):
    """One length group of a batch and the verifier's targets on its rows."""

    batch: dict
    weights: torch.Tensor
    frames: int
    checks: list
    seconds: list
    found: list


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
    claims: ClaimCheck | None = None,
) -> BatchLoss:
    """Backpropagate the loss of the batch `rows` (``weighted_loss``, plus `aux_weight` times
    the frame target's, plus the claim target's with `claims`), one length group at a time."""
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
        checks = [claims.targets(rows[i], encoded[i].input_ids) for i in group] if claims else []
        seconds = (
            [claims.times(encoded[i].input_ids) for i in group]
            if claims and claims.times and claims.time_weight
            else []
        )
        found = (
            [claims.lookups(rows[i], encoded[i].input_ids) for i in group]
            if claims and claims.lookups and claims.lookup_weight
            else []
        )
        parts.append(_Group(batch, weights, frames, checks, seconds, found))
    total_weight = max(sum(float(part.weights.sum()) for part in parts), 1e-6)
    total_frames = sum(part.frames for part in parts)
    wrong = claims.wrong_weight if claims else 1.0
    claim_total = sum(sum(claim_weights(part.checks, wrong)) for part in parts)
    total_targets = sum(len(c) for part in parts for c in part.checks)
    time_total = sum(len(s) for part in parts for s in part.seconds)
    lookup_total = sum(len(f) for part in parts for f in part.found)
    loss_sum = aux_sum = right = claim_sum = claim_right = time_sum = time_right = 0.0
    lookup_sum = lookup_right = 0.0
    for batch, weights, frames, checks, seconds, found in parts:
        claim_part = sum(claim_weights(checks, wrong))
        time_part = sum(len(s) for s in seconds)
        lookup_part = sum(len(f) for f in found)
        with ExitStack() as taps:
            tapped = claim_part or lookup_part
            tap = taps.enter_context(tap_layer(model, claims.layer)) if tapped else None
            at = taps.enter_context(tap_layer(model, claims.time_layer)) if time_part else None
            loss, aux, accuracy = weighted_loss(model, batch, weights, head)
        share = float(weights.sum()) / total_weight
        objective = loss * share
        if aux is not None:
            objective = objective + aux_weight * aux * (frames / total_frames)
            aux_sum += aux.item() * frames
            right += accuracy * frames
        if claim_part:
            length = batch["input_ids"].shape[1]
            claim, claim_accuracy = claim_loss(claims.head, tap.hidden, length, checks, wrong)
            objective = objective + claims.weight * claim * (claim_part / claim_total)
            claim_sum += claim.item() * claim_part
            claim_right += claim_accuracy * sum(len(c) for c in checks)
        if time_part:
            length = batch["input_ids"].shape[1]
            readout = time_readout(model, claims.times, claims.time_head)
            timed, time_accuracy = position_loss(readout, at.hidden, length, seconds)
            objective = objective + claims.time_weight * timed * (time_part / time_total)
            time_sum += timed.item() * time_part
            time_right += time_accuracy * time_part
        if lookup_part:
            length = batch["input_ids"].shape[1]
            looked, lookup_accuracy = position_loss(
                claims.lookup_head.weight, tap.hidden, length, found
            )
            objective = objective + claims.lookup_weight * looked * (lookup_part / lookup_total)
            lookup_sum += looked.item() * lookup_part
            lookup_right += lookup_accuracy * lookup_part
        objective.backward()
        loss_sum += loss.item() * share
    aux_mean = (aux_sum / total_frames, right / total_frames) if total_frames else (None, None)
    claim_mean = (
        (claim_sum / claim_total, claim_right / total_targets) if claim_total else (None, None)
    )
    time_mean = (time_sum / time_total, time_right / time_total) if time_total else (None, None)
    lookup_mean = (
        (lookup_sum / lookup_total, lookup_right / lookup_total) if lookup_total else (None, None)
    )
    return BatchLoss(loss_sum, *aux_mean, *claim_mean, *time_mean, *lookup_mean)
