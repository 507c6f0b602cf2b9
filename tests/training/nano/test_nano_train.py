"""paravt-nano's SFT pieces: the weighted loss, the frame target, batches, deduplication."""

from __future__ import annotations

import math
from collections import Counter
from types import SimpleNamespace

import pytest
import torch

from agents.verify import verify_messages
from training.nano.loss import frame_loss, linear_patch_embed, token_weights, weighted_loss
from training.nano.sampler import verify_kind
from training.nano.train import Sampler, SFTSchedule, dedupe


class FixedHidden(torch.nn.Module):
    """Its "hidden states" are the logits themselves (lm_head is the identity): uniform over
    4 tokens, except that position 1 of row 0 puts almost all mass on token 2."""

    def __init__(self):
        super().__init__()
        self.lm_head = torch.nn.Identity()

    def model(self, input_ids, attention_mask, mm_token_type_ids):
        hidden = torch.zeros(input_ids.shape[0], input_ids.shape[1], 4)
        hidden[0, 1, 2] = 50.0
        return SimpleNamespace(last_hidden_state=hidden)


def batch(labels):
    labels = torch.tensor(labels)
    ones = torch.ones_like(labels)
    return {
        "input_ids": ones * 0,
        "attention_mask": ones,
        "mm_token_type_ids": ones * 0,
        "labels": labels,
    }


def test_the_loss_is_a_token_mean_with_content_tokens_weighted():
    # row 0: one target (token 2, predicted from position 1: ~0 loss)
    # row 1: four targets under uniform logits (log 4 each); token 3 is a content token
    b = batch([[-100, -100, 2, -100, -100], [-100, 1, 3, 1, 1]])
    content = torch.tensor([False, False, False, True])
    plain, _, _ = weighted_loss(FixedHidden(), b, token_weights(b["labels"], content, 1.0))
    assert math.isclose(plain.item(), 4 * math.log(4) / 5, rel_tol=1e-4)  # token mean
    weighted, _, _ = weighted_loss(FixedHidden(), b, token_weights(b["labels"], content, 4.0))
    assert math.isclose(weighted.item(), 7 * math.log(4) / 8, rel_tol=1e-4)  # 1 + 3 + 4 (x4)


def test_the_frame_target_pools_each_frames_tokens_and_scores_colour_and_shape():
    head = torch.nn.Linear(3, 10, bias=False)
    with torch.no_grad():
        head.weight.zero_()
        head.weight[2, 0] = head.weight[8, 1] = 20.0  # feature 0 -> colour 2, 1 -> shape 3
    frame = torch.zeros(12, 3)
    frame[5, 0] = frame[6, 1] = 1.0  # one token shows the colour, another the shape
    empty = torch.zeros(12, 3)
    loss, accuracy = frame_loss(head, [frame, empty], torch.tensor([[2, 3], [0, 0]]))
    assert accuracy == 1.0  # the empty frame's logits tie: argmax is class 0, "none"
    loss_wrong, _ = frame_loss(head, [frame, empty], torch.tensor([[1, 1], [0, 0]]))
    assert loss.item() < loss_wrong.item()


def test_the_patch_embedding_as_a_product_equals_the_convolution():
    conv = torch.nn.Conv3d(3, 8, kernel_size=(2, 4, 4), stride=(2, 4, 4), bias=True)
    embed = SimpleNamespace(
        proj=conv, in_channels=3, temporal_patch_size=2, patch_size=4, embed_dim=8
    )
    model = SimpleNamespace(model=SimpleNamespace(visual=SimpleNamespace(patch_embed=embed)))
    pixels = torch.randn(5, 3 * 2 * 4 * 4)
    reference = conv(pixels.view(-1, 3, 2, 4, 4)).view(-1, 8)
    linear_patch_embed(model)
    assert torch.allclose(embed.forward(pixels), reference, atol=1e-5)


def test_sub_agent_batches_balance_colours_and_main_batches_draw_main_rows():
    rows = [{"agent": "main", "role": "main", "noise": 0.0, "colours": []}]
    rows += [
        {"agent": "sub:0:0", "role": "sub_agent", "noise": 0.0, "colours": []} for _ in range(50)
    ]
    rows += [
        {"agent": "sub:0:1", "role": "sub_agent", "noise": 0.0, "colours": [c]}
        for c in ("red", "green")
    ]
    schedule = SFTSchedule(
        steps=400,
        sub_batch_rows=10,
        needle_share=0.5,
        main_share=0.25,
        notes_share=0.0,
        verify_share=0.0,
    )
    sampler = Sampler(rows, schedule)
    drawn = [sampler.batch(step) for step in range(400)]
    mains = [rows for agent, rows in drawn if agent == "main"]
    assert 0.15 < len(mains) / 400 < 0.35 and all(r["agent"] == "main" for b in mains for r in b)
    subs = [r for agent, b in drawn if agent == "sub" for r in b]
    greens = sum(r["colours"] == ["green"] for r in subs) / len(subs)
    assert 0.08 < greens < 0.17  # half the rows show a needle, colours uniform over four


def verify_row(note: str, verdict: str) -> dict:
    """The gate's own request (`agents.verify`), a label standing for its frames."""
    label = {"type": "text", "text": "<3.0 seconds>"}
    messages = [
        *verify_messages(label, question="Q?", claim=note),
        {"role": "assistant", "content": [{"type": "text", "text": verdict}]},
    ]
    return {
        "agent": "verify:sub:0:0",
        "role": "verifier",
        "noise": 0.0,
        "colours": [],
        "messages": messages,
    }


def test_verifier_batches_balance_right_wrong_and_empty_notes():
    rows = [{"agent": "main", "role": "main", "noise": 0.0, "colours": []}]
    rows += [verify_row("No coloured shapes.", "SUPPORTED") for _ in range(60)]
    rows += [verify_row("Seen: red circle from 3 to 5 seconds.", "SUPPORTED") for _ in range(5)]
    rows += [verify_row("Seen: blue circle from 3 to 5 seconds.", "UNSUPPORTED")]
    rows += [verify_row("A man talks.", "UNCERTAIN")]
    schedule = SFTSchedule(
        steps=300, main_share=0.5, notes_share=0.0, verify_share=0.5, verify_batch_rows=10
    )
    sampler = Sampler(rows, schedule)
    drawn = [
        r for agent, b in (sampler.batch(s) for s in range(300)) if agent == "verify" for r in b
    ]
    kinds = Counter(verify_kind(r) for r in drawn)
    share = {k: kinds[k] / len(drawn) for k in kinds}
    assert abs(share["wrong"] - 0.45) < 0.06 and abs(share["right_needle"] - 0.35) < 0.06
    assert abs(share["right_empty"] - 0.15) < 0.05, "the many empty notes do not swamp them"
    with pytest.raises(ValueError, match="no such rows"):
        Sampler(rows[:1], schedule)


def test_rows_repeated_for_several_questions_are_kept_once():
    note = {"role": "assistant", "content": [{"type": "text", "text": "No coloured shapes."}]}
    a = {"messages": [note], "images": [{"bytes": b"jpeg-a"}], "agent": "sub:0:0"}
    b = {"messages": [note], "images": [{"bytes": b"jpeg-b"}], "agent": "sub:0:1"}
    kept = dedupe([a, dict(a), b, dict(a)])
    assert kept == [a, b]
