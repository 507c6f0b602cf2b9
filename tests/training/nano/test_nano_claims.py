"""The verifier's claim target (training.nano.claims): labels from the right note at each fact
of the gate's own request, and a loss read from the tapped layer, in groups as in one batch."""

from __future__ import annotations

import random

import pytest
import torch

from agents.misreads import misread
from training.nano.claims import LAYER, ClaimTargets, claim_head, claim_loss
from training.nano.groups import ClaimCheck, backward_in_groups
from training.nano.loss import content_mask, frame_head, linear_patch_embed
from training.nano.oracle import NO_SHAPES
from training.nano.verifier_rows import verify_row

from .test_nano_groups import frame, nano  # noqa: F401  (the shipped nano, once per module)

RIGHT = "Seen: blue circle from 94 to 99 seconds; the circle is blue."
TIMES = (89, 94, 99, 104)


def sub_row(first: int = TIMES[0]) -> dict:
    """A sub-agent row's last user turn: four labelled frames from `first` on, the second
    showing a blue circle, then its instruction."""
    parts, images = [], []
    for t, shown in zip(range(first, first + 20, 5), (False, True, False, False), strict=True):
        parts += [{"type": "text", "text": f"<{t}.0 seconds>"}, {"type": "image"}]
        images.append(frame((30, 30, 220) if shown else (40, 40, 40)))
    parts.append({"type": "text", "text": "Describe the coloured shapes."})
    return {"messages": [{"role": "user", "content": parts}, {}], "images": images}


def row(
    claim: str, right: str | None = RIGHT, verdict: str = "UNSUPPORTED", first: int = TIMES[0]
) -> dict:
    meta = {} if right is None else {"right_note": right}
    return verify_row(sub_row(first), "What colour is the circle?", claim, verdict, **meta)


def hidden_after(model, batch, layer: int) -> torch.Tensor:
    """The model's hidden states after decoder layer `layer`, as transformers reports them."""
    return model.model(
        input_ids=batch["input_ids"],
        attention_mask=batch["attention_mask"],
        mm_token_type_ids=batch["mm_token_type_ids"],
        pixel_values=batch["pixel_values"],
        image_grid_thw=batch["image_grid_thw"],
        output_hidden_states=True,
    ).hidden_states[layer + 1]


def in_groups(model, collate, rows, check: ClaimCheck, per_group: int):
    """What backward_in_groups scores on `rows` with the verifier's targets `check`, from
    zeroed gradients (the token loss at SFT's content weight, no frame target)."""
    model.zero_grad(set_to_none=True)
    return backward_in_groups(
        model,
        frame_head(model),
        collate,
        rows,
        content=content_mask(collate.tokenizer),
        content_weight=4.0,
        aux_weight=0.0,
        rows_per_group=per_group,
        claims=check,
    )


def labelled(nano, claim, right=RIGHT):  # noqa: F811
    tokenizer, collate, _ = nano
    ids = collate.encode_row(row(claim, right)).input_ids
    targets = ClaimTargets(tokenizer, content_mask(tokenizer))(row(claim, right), ids)
    return [(tokenizer.decode([ids[k]]).strip(), y) for k, y in targets]


def test_a_misread_colour_is_wrong_at_each_mention_and_every_other_fact_right(nano):  # noqa: F811
    wrong, kind = misread(RIGHT, "colour", random.Random(0))
    assert kind == "colour"
    colour = next(c for c in ("red", "green", "yellow") if c in wrong)
    said = labelled(nano, wrong)
    assert [text for text, y in said if y == 0] == [f"Seen: {colour}", colour]
    right_facts = [text for text, y in said if y == 1]
    assert {"circle", "94", "99"} <= set(right_facts), said
    assert "blue" not in " ".join(
        text for text, _ in said
    )  # the question's words are not the note's


def test_the_right_note_is_right_at_the_same_facts(nano):  # noqa: F811
    said = labelled(nano, RIGHT)
    assert all(y == 1 for _, y in said)
    assert [t for t, _ in said][:4] == ["Seen: blue", "circle", "94", "99"], said


def test_a_moved_span_is_wrong_at_its_times_only(nano):  # noqa: F811
    wrong, kind = misread(RIGHT, "time", random.Random(1), times=TIMES, window_end=109)
    assert (kind, wrong.split(";")[0]) == ("time", "Seen: blue circle from 89 to 94 seconds")
    said = labelled(nano, wrong)
    # 94 is a time of the right note too, but not where this note says it
    assert [text for text, y in said if y == 0] == ["89", "94"], said
    assert ("circle", 1.0) in said and ("Seen: blue", 1.0) in said


def test_a_sighting_invented_on_an_empty_window_is_wrong_at_every_fact(nano):  # noqa: F811
    said = labelled(nano, "Seen: red cross from 94 to 99 seconds; the cross is red.", NO_SHAPES)
    assert len(said) >= 4 and all(y == 0 for _, y in said)


def test_a_row_without_a_right_note_has_no_targets(nano):  # noqa: F811
    tokenizer, collate, _ = nano
    traced = row(RIGHT, right=None)
    ids = collate.encode_row(traced).input_ids
    assert ClaimTargets(tokenizer, content_mask(tokenizer))(traced, ids) == []


def test_the_loss_reads_the_rows_positions_after_a_shared_prefix():
    torch.manual_seed(0)
    head, hidden = torch.nn.Linear(8, 1), torch.randn(2, 10, 8)
    targets = [[(7, 1.0), (8, 0.0)], [(9, 1.0)]]
    whole = claim_loss(head, hidden, 10, targets)[0]
    assert claim_loss(head, hidden[:, 4:], 10, targets)[0].item() == pytest.approx(whole.item())


@pytest.mark.parametrize("wrong_weight", [1.0, 4.0])
def test_groups_give_the_claim_target_of_the_layer_s_own_output(nano, wrong_weight):  # noqa: F811
    """The loss backward_in_groups scores equals binary cross-entropy computed by hand from
    the model's hidden states after decoder layer LAYER, at the labelled positions, with the
    wrong facts weighted alike."""
    tokenizer, collate, model = nano
    linear_patch_embed(model)
    content = content_mask(tokenizer)
    rows = [  # other frame times each, so no two rows open alike
        row(RIGHT, verdict="SUPPORTED", first=89),
        row(misread(RIGHT, "colour", random.Random(1))[0], first=88),
        row(misread(RIGHT, "shape", random.Random(2))[0], first=87),
    ]
    torch.manual_seed(0)
    head = claim_head(model)
    check = ClaimCheck(head, ClaimTargets(tokenizer, content), 1.0, wrong_weight)

    batch = collate(rows)
    with torch.no_grad():
        states = hidden_after(model, batch, LAYER)
        targets = [check.targets(r, batch["input_ids"][i].tolist()) for i, r in enumerate(rows)]
        scores = head(torch.stack([states[i, k] for i, row in enumerate(targets) for k, _ in row]))
        labels = torch.tensor([y for row in targets for _, y in row])
        weights = 1 + (wrong_weight - 1) * (1 - labels)
        each = torch.nn.functional.binary_cross_entropy_with_logits(
            scores.squeeze(-1), labels, reduction="none"
        )
        by_hand = ((each * weights).sum() / weights.sum()).item()

    for per_group in (1, 3):
        scored = in_groups(model, collate, rows, check, per_group)
        assert scored.claim == pytest.approx(by_hand, rel=1e-4)
        assert head.weight.grad is not None and head.weight.grad.norm() > 0
