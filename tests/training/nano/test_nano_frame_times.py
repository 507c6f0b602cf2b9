"""The verifier's time targets (training.nano.frame_times): each visual token of the gate's
own request labelled with its frame's whole second, each of the note's times with what its
frame shows, and their losses read from the tapped layers, in groups as in one batch."""

from __future__ import annotations

import pytest
import torch

from agents import benchmark
from training.nano import oracle
from training.nano.claims import ClaimTargets, claim_head
from training.nano.frame_times import (
    FrameTimes,
    NoteLookups,
    lookup_head,
    position_loss,
    time_head,
    time_readout,
)
from training.nano.groups import ClaimCheck
from training.nano.loss import content_mask, linear_patch_embed
from training.nano.verifier_rows import verify_row

from .test_nano_claims import RIGHT, hidden_after, in_groups, row, sub_row
from .test_nano_groups import nano  # noqa: F401  (the shipped nano, once per module)


def frame_times(nano) -> FrameTimes:  # noqa: F811
    tokenizer, collate, _ = nano
    return FrameTimes(
        tokenizer, collate.image_token_id, tokenizer.convert_tokens_to_ids("<|vision_end|>")
    )


def test_each_visual_token_is_labelled_with_its_frames_second_and_nothing_else(nano):  # noqa: F811
    _, collate, _ = nano
    window = sub_row(89)  # frames labelled <89.0 seconds> .. <104.0 seconds>
    window["messages"][0]["content"][2]["text"] = "<94.5 seconds>"  # a fraction: its second
    every_frame = "Seen: blue circle from 89 to 109 seconds; the circle is blue."
    gate = verify_row(window, "What colour is the circle?", every_frame, "UNSUPPORTED")
    ids = collate.encode_row(gate).input_ids
    targets = frame_times(nano)(ids)
    visual = [k for k, token in enumerate(ids) if token == collate.image_token_id]
    assert [k for k, _ in targets] == visual
    per_frame = len(visual) // 4
    assert [s for _, s in targets] == [s for s in (89, 94, 99, 104) for _ in range(per_frame)]


def test_a_request_without_labels_has_no_targets(nano):  # noqa: F811
    _, collate, _ = nano
    window = sub_row()
    for part in window["messages"][0]["content"]:
        if part.get("type") == "text" and part["text"].startswith("<"):
            part["text"] = "A frame:"
    gate = verify_row(window, "What colour is the circle?", RIGHT, "SUPPORTED")
    assert frame_times(nano)(collate.encode_row(gate).input_ids) == []


def test_the_loss_reads_the_rows_positions_after_a_shared_prefix():
    torch.manual_seed(0)
    readout, hidden = torch.randn(3, 8), torch.randn(2, 10, 8)
    targets = [[(7, 0), (8, 2)], [(9, 1)]]
    whole = position_loss(readout, hidden, 10, targets)[0]
    after_prefix = position_loss(readout, hidden[:, 4:], 10, targets)[0]
    assert after_prefix.item() == pytest.approx(whole.item())
    by_hand = torch.nn.functional.cross_entropy(
        torch.stack([hidden[0, 7], hidden[0, 8], hidden[1, 9]]) @ readout.T,
        torch.tensor([0, 2, 1]),
    )
    assert whole.item() == pytest.approx(by_hand.item())


def test_the_embedding_readout_leaves_the_tokens_alone_and_a_head_of_its_own_trains(nano):  # noqa: F811
    _, _, model = nano
    times = frame_times(nano)
    embedded = time_readout(model, times)
    embedding = model.model.language_model.embed_tokens.weight
    assert torch.equal(embedded, embedding[times.ids]) and not embedded.requires_grad
    head = time_head(model)
    assert time_readout(model, times, head) is head.weight and head.weight.shape[0] == 601


def test_groups_give_the_time_target_of_the_first_layer_s_own_output(nano):  # noqa: F811
    """The loss backward_in_groups scores equals cross-entropy computed by hand from the
    model's hidden states after decoder layer 0 at the visual tokens, against the seconds'
    input embeddings."""
    tokenizer, collate, model = nano
    linear_patch_embed(model)
    content = content_mask(tokenizer)
    rows = [row(RIGHT, verdict="SUPPORTED", first=f) for f in (89, 88, 87)]
    times = frame_times(nano)
    check = ClaimCheck(
        claim_head(model), ClaimTargets(tokenizer, content), 1.0, times=times, time_weight=1.0
    )
    batch = collate(rows)
    with torch.no_grad():
        states = hidden_after(model, batch, 0)
        targets = [times(batch["input_ids"][i].tolist()) for i in range(len(rows))]
        picked = torch.stack([states[i, k] for i, found in enumerate(targets) for k, _ in found])
        embedding = model.model.language_model.embed_tokens.weight
        scores = picked @ embedding[times.ids].T
        labels = torch.tensor([s for found in targets for _, s in found])
        by_hand = torch.nn.functional.cross_entropy(scores, labels).item()

    for per_group in (1, 3):
        scored = in_groups(model, collate, rows, check, per_group)
        assert scored.time == pytest.approx(by_hand, rel=1e-4)


def lookups(nano) -> NoteLookups:  # noqa: F811
    tokenizer, _, _ = nano
    return NoteLookups(frame_times(nano), ClaimTargets(tokenizer, content_mask(tokenizer)))


def gate_with_labels(claim: str) -> dict:
    """The gate's request on those of frames 89..104 (the circle at 94 only) that the claim
    cites, with the frames' labels as the data stage writes them."""
    gate = row(claim, first=89)
    blue_circle = (1 + benchmark.COLOURS.index("blue"), 1 + benchmark.SHAPES.index("circle"))
    times = oracle.frame_times(gate["messages"][1])
    return {**gate, "frame_labels": [blue_circle if t == 94 else (0, 0) for t in times]}


def test_each_time_of_the_note_is_asked_what_its_frame_shows(nano):  # noqa: F811
    tokenizer, collate, _ = nano
    circle = (1 + benchmark.COLOURS.index("blue")) * 5 + 1 + benchmark.SHAPES.index("circle")
    for claim, expected in (
        # the gate shows the frames from a span's start up to its end: the end's is not there
        (RIGHT, [("94", circle)]),
        ("Seen: blue circle from 89 to 94 seconds; the circle is blue.", [("89", 0)]),
        (  # two spans: the gate shows 94 and 99
            "Seen: blue circle from 94 to 99 seconds; red cross from 99 to 104 seconds.",
            [("94", circle), ("99", 0), ("99", 0)],
        ),
        ("Seen: blue circle from 94 to 120 seconds; the circle is blue.", [("94", circle)]),
        ("No coloured shapes.", []),
    ):
        gate = gate_with_labels(claim)
        ids = collate.encode_row(gate).input_ids
        found = [(tokenizer.decode([ids[k]]).strip(), c) for k, c in lookups(nano)(gate, ids)]
        assert found == expected, claim


def test_groups_give_the_lookup_target_of_the_claim_layer_s_output(nano):  # noqa: F811
    tokenizer, collate, model = nano
    linear_patch_embed(model)
    content = content_mask(tokenizer)
    longer = "Seen: blue circle from 89 to 99 seconds; the circle is blue."
    rows = [gate_with_labels(RIGHT), gate_with_labels(longer)]
    torch.manual_seed(0)
    reader = lookup_head(model)
    check = ClaimCheck(
        claim_head(model),
        ClaimTargets(tokenizer, content),
        0.0,
        lookups=lookups(nano),
        lookup_head=reader,
        lookup_weight=1.0,
    )
    batch = collate(rows)
    with torch.no_grad():
        states = hidden_after(model, batch, check.layer)
        found = [check.lookups(r, batch["input_ids"][i].tolist()) for i, r in enumerate(rows)]
        picked = torch.stack([states[i, k] for i, each in enumerate(found) for k, _ in each])
        labels = torch.tensor([c for each in found for _, c in each])
        by_hand = torch.nn.functional.cross_entropy(reader(picked), labels).item()
    scored = in_groups(model, collate, rows, check, 1)
    assert scored.lookup == pytest.approx(by_hand, rel=1e-4)
    assert reader.weight.grad is not None and reader.weight.grad.norm() > 0


def test_a_note_s_times_are_read_as_seconds_with_or_without_spaced_seconds(nano):  # noqa: F811
    from transformers import AutoTokenizer

    from serving.checkpoints import NANO_BASE_DIR, NANO_DIR

    _, collate, _ = nano
    end = "<|vision_end|>"
    for folder in (NANO_DIR, NANO_BASE_DIR):
        tokenizer = AutoTokenizer.from_pretrained(folder)
        times = FrameTimes(tokenizer, collate.image_token_id, tokenizer.convert_tokens_to_ids(end))
        ids = tokenizer.encode("Seen: blue circle from 94 to 99 seconds.", add_special_tokens=False)
        assert [times.written[i] for i in ids if i in times.written] == [94, 99], folder
