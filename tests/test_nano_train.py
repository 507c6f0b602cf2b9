"""paravt-nano's SFT pieces: the per-row loss and the deduplication of repeated rows."""

from __future__ import annotations

import math
from types import SimpleNamespace

import torch

from training.nano.train import dedupe, row_mean_loss


class FixedLogits(torch.nn.Module):
    """Returns the same logits whatever the batch: uniform over 4 tokens, except that
    position 1 of row 0 puts almost all mass on token 2."""

    def forward(self, input_ids, attention_mask):
        logits = torch.zeros(input_ids.shape[0], input_ids.shape[1], 4)
        logits[0, 1, 2] = 50.0
        return SimpleNamespace(logits=logits)


def test_each_row_weighs_the_same_whatever_its_number_of_target_tokens():
    batch = {
        "input_ids": torch.zeros(2, 5, dtype=torch.long),
        "attention_mask": torch.ones(2, 5, dtype=torch.long),
        # row 0: one target (token 2 at position 2, predicted from position 1: ~0 loss)
        # row 1: four targets under uniform logits: log 4 each
        "labels": torch.tensor([[-100, -100, 2, -100, -100], [-100, 1, 1, 1, 1]]),
    }
    loss = row_mean_loss(FixedLogits(), batch).item()
    assert math.isclose(loss, math.log(4) / 2, rel_tol=1e-4)  # a token mean would give 0.8 log 4


def test_rows_repeated_for_several_questions_are_kept_once():
    note = {"role": "assistant", "content": [{"type": "text", "text": "No coloured shapes."}]}
    a = {"messages": [note], "images": [{"bytes": b"jpeg-a"}], "agent": "sub:0:0"}
    b = {"messages": [note], "images": [{"bytes": b"jpeg-b"}], "agent": "sub:0:1"}
    kept = dedupe([a, dict(a), b, dict(a)])
    assert kept == [a, b]
