"""A batch run in length groups trains exactly as SFT ran the batch at once before (one padded
batch, one ``weighted_loss``), on the shipped nano."""

from __future__ import annotations

import io
import random

import pytest
import torch
from PIL import Image

from agents import benchmark
from training.collate import FramesCollator
from training.nano import notes
from training.nano.groups import BatchLoss, backward_in_groups
from training.nano.loss import (
    content_mask,
    frame_head,
    linear_patch_embed,
    token_weights,
    weighted_loss,
)
from training.nano.rebuild import SHIPPED

CONTENT_WEIGHT, AUX_WEIGHT = 4.0, 0.5


def frame(colour: tuple[int, int, int]) -> dict:
    image = Image.new("RGB", (benchmark.WIDTH, benchmark.HEIGHT), (40, 40, 40))
    image.paste(colour, (40, 30, 80, 70))
    data = io.BytesIO()
    image.save(data, format="PNG")
    return {"bytes": data.getvalue(), "path": None}


def verify_row(n_frames: int, verdict: str) -> dict:
    """A verifier row of `n_frames` labelled frames (the gate's format), the first showing a
    red square (so each row's frame loss differs); its first frame's time is its frame
    count, so no two rows open alike."""
    parts, images, labels = [], [], []
    for k in range(n_frames):
        shown = k == 0
        parts += [{"type": "text", "text": f"<{n_frames + 3 * k}.0 seconds>"}, {"type": "image"}]
        images.append(frame((220, 30, 30) if shown else (40, 40, 40)))
        labels.append((1, 2) if shown else (0, 0))
    parts.append({"type": "text", "text": "Note: Seen: red square. Reply with one word."})
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "You check claims."}]},
        {"role": "user", "content": parts},
        {"role": "assistant", "content": [{"type": "text", "text": verdict}]},
    ]
    return {"messages": messages, "images": images, "frame_labels": labels}


@pytest.fixture(scope="module")
def nano():
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(SHIPPED)
    collate = FramesCollator(tokenizer, AutoImageProcessor.from_pretrained(SHIPPED))
    return tokenizer, collate, AutoModelForImageTextToText.from_pretrained(SHIPPED)


def grads_of(model, head) -> dict[str, torch.Tensor]:
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    grads |= {"head." + n: p.grad.clone() for n, p in head.named_parameters() if p.grad is not None}
    return grads


def fresh(nano):
    """The model with no gradients, and the same untrained frame head each time."""
    model = nano[2]
    torch.manual_seed(0)
    head = frame_head(model)
    linear_patch_embed(model)
    model.zero_grad(set_to_none=True)
    return model, head


def one_pass(nano, rows):
    """The batch as SFT ran it before groups: one padded batch, ``weighted_loss`` plus
    AUX_WEIGHT times the frame target, one backward pass."""
    tokenizer, collate, _ = nano
    model, head = fresh(nano)
    batch = collate(rows)
    labels = [label for row in rows for label in row.get("frame_labels", [])]
    if labels:
        batch["frame_labels"] = torch.tensor(labels, dtype=torch.long)
    weights = token_weights(batch["labels"], content_mask(tokenizer), CONTENT_WEIGHT)
    loss, aux, accuracy = weighted_loss(model, batch, weights, head)
    (loss + AUX_WEIGHT * aux if aux is not None else loss).backward()
    scored = BatchLoss(loss.item(), aux and aux.item(), accuracy)
    return scored, grads_of(model, head)


def grouped(nano, rows, rows_per_group):
    tokenizer, collate, _ = nano
    model, head = fresh(nano)
    scored = backward_in_groups(
        model,
        head,
        collate,
        rows,
        content=content_mask(tokenizer),
        content_weight=CONTENT_WEIGHT,
        aux_weight=AUX_WEIGHT,
        rows_per_group=rows_per_group,
    )
    return scored, grads_of(model, head)


def assert_same(one, grouped):
    (scored, grads), (scored_g, grads_g) = one, grouped
    assert scored_g.loss == pytest.approx(scored.loss, rel=1e-5)
    if scored.aux is not None:
        assert scored_g.aux == pytest.approx(scored.aux, rel=1e-5)
        assert scored_g.accuracy == pytest.approx(scored.accuracy)
    assert grads_g.keys() == grads.keys()
    for name, grad in grads.items():  # float32 sums in another order: equal to 1e-5
        difference = (grads_g[name] - grad).norm() / grad.norm().clamp(min=1e-12)
        assert difference < 1e-5, (name, float(difference))


def test_note_rows_of_different_lengths_give_the_batch_s_loss_and_gradient(nano):
    rows = list(notes.note_rows(range(4000, 4004)))
    rows = random.Random(0).sample(rows, 12)
    lengths = {len(nano[1].encode_row(r).input_ids) for r in rows}
    assert max(lengths) > 1.5 * min(lengths)  # the case the groups are for
    assert_same(one_pass(nano, rows), grouped(nano, rows, 4))


def test_rows_with_frames_give_the_batch_s_frame_target_too(nano):
    rows = [verify_row(n, v) for n, v in ((2, "SUPPORTED"), (6, "UNSUPPORTED"), (4, "SUPPORTED"))]
    one = one_pass(nano, rows)
    assert one[0].aux is not None
    assert_same(one, grouped(nano, rows, 1))
