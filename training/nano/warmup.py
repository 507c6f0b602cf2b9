"""paravt-nano's two warm-ups before SFT: copy circuits for the text, frame features for vision.

Every decision the main agent makes after the notes is a lookup in its context: the option's
text after its opener, the colour after "the circle is", the span after "blue circle from".
A transformer does such lookups with a pair of attention heads (one that marks each token
with the token before it, one that finds the earlier place a token occurred and copies what
followed it). With one or two lookups per SFT row, those heads had not formed after a
thousand steps in trials; on rows where *every* token is such a copy they form in a few
hundred. So:

- **Copy warm-up.** Rows of random words from the tokenizer's own vocabulary (and whole
  seconds), then the same words again, forwards or backwards; the loss is on the repeat.
- **Vision warm-up.** The vision tower and the training-only frame head
  (``training.nano.loss.frame_head``) learn each frame's colour and shape from the
  sub-agent rows' frames alone (half of them showing a needle), before the text model has to
  read them. Frames only: a step is a fraction of an SFT step.

Both are seeded, so the rebuild stays deterministic.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Sequence

import torch

from agents import prompts
from training.collate import to_pil
from training.nano.loss import frame_loss, token_weights, weighted_loss

log = logging.getLogger(__name__)

REPEAT, BACKWARDS = "Repeat:", "Repeat backwards:"


def copy_pool(tokenizer) -> tuple[list[str], list[str]]:
    """(words, numbers): every alphabetic single token with a leading space, and every whole
    second written as it is in text (" 93")."""
    words, numbers = set(), set()
    for token in tokenizer.get_vocab():
        text = tokenizer.convert_tokens_to_string([token])
        if text.startswith(" ") and text[1:].isalpha() and len(text) > 2:
            words.add(text)
        elif text.isdigit():
            numbers.add(f" {text}")
    return sorted(words), sorted(numbers, key=lambda n: int(n))


def copy_rows(tokenizer, n: int, *, seed: int = 0, length: int = 24) -> list[dict]:
    """`n` rows: a user turn of `length` random words, the assistant's turn the same words
    again (every other row backwards). Numbers are two tokens (" ", "93"), so a row also
    exercises copies keyed two tokens back.

    >>> rows = copy_rows(_Vocab(), 2, length=3)
    >>> ask, said = (m["content"][0]["text"] for m in rows[1]["messages"])
    >>> ask.startswith("Repeat backwards:"), said.split() == ask.split()[:1:-1]
    (True, True)
    """
    words, numbers = copy_pool(tokenizer)
    rng = random.Random(seed)
    rows = []
    for k in range(n):
        seq = [rng.choice(words if rng.random() < 0.6 else numbers) for _ in range(length)]
        backwards = k % 2 == 1
        said = list(reversed(seq)) if backwards else seq
        ask = BACKWARDS if backwards else REPEAT
        messages = [
            {"role": "user", "content": [prompts.text_part(ask + "".join(seq))]},
            {"role": "assistant", "content": [prompts.text_part("".join(said).strip())]},
        ]
        rows.append(
            {"messages": messages, "images": [], "agent": "copy", "role": "main", "noise": 0.0}
        )
    return rows


class _Vocab:
    """A three-word stand-in tokenizer for the doctest."""

    def get_vocab(self):
        return {" red": 0, " blue": 1, "7": 2}

    def convert_tokens_to_string(self, tokens):
        return "".join(tokens)


def _optimise(params, step_loss, *, steps: int, lr: float, label: str) -> list[float]:
    """AdamW on `params` for `steps` (learning rate ramped over the first 50), each step's
    loss from ``step_loss(step) -> (loss, metric)``; returns the metric's mean every 50."""
    optimizer = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.98), weight_decay=0.01)
    means, window, began = [], [], time.perf_counter()
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = lr * min(1.0, (step + 1) / 50)
        loss, metric = step_loss(step)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        window.append(metric)
        if (step + 1) % 50 == 0:
            means.append(round(sum(window) / len(window), 4))
            log.info(
                "%s warm-up step %d: %.3f (%.0f s)",
                label,
                step + 1,
                means[-1],
                time.perf_counter() - began,
            )
            window = []
    return means


def warm_copy(
    model, collate, rows: Sequence[dict], *, steps: int, batch: int, lr: float, seed: int
) -> list[float]:
    """Train the text model on copy rows for `steps`; returns the loss every 50 steps."""
    rng = random.Random(seed)
    plain = torch.zeros(model.config.text_config.vocab_size, dtype=torch.bool)

    def step_loss(_step: int):
        chosen = collate([rng.choice(rows) for _ in range(batch)])
        loss, _, _ = weighted_loss(model, chosen, token_weights(chosen["labels"], plain, 1.0))
        return loss, loss.item()

    params = [p for n, p in model.named_parameters() if "visual" not in n]
    return _optimise(params, step_loss, steps=steps, lr=lr, label="copy (loss)")


def labelled_frames(rows: Sequence[dict]) -> list[tuple[bytes, tuple[int, int]]]:
    """(JPEG bytes, (colour, shape) label) of every distinct frame of the sub-agent rows."""
    seen, frames = set(), []
    for row in rows:
        if row["role"] != "sub_agent":
            continue
        for image, label in zip(row["images"], row["frame_labels"], strict=True):
            if image["bytes"] not in seen:
                seen.add(image["bytes"])
                frames.append((image["bytes"], tuple(label)))
    return frames


def warm_vision(
    model,
    head,
    processor,
    frames: Sequence[tuple[bytes, tuple[int, int]]],
    *,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
) -> list[float]:
    """Train the vision tower and `head` on single frames, half of each batch showing a
    needle; returns the frame accuracy (colour and shape both right) every 50 steps."""
    rng = random.Random(seed)
    needles = [f for f in frames if f[1][0]]
    empty = [f for f in frames if not f[1][0]]

    def step_loss(_step: int):
        chosen = [rng.choice(needles if k % 2 == 0 else empty) for k in range(batch)]
        pixels = processor(images=[to_pil(f[0]) for f in chosen], return_tensors="pt")
        vision = model.model.get_image_features(
            pixels["pixel_values"], pixels["image_grid_thw"], return_dict=True
        )
        labels = torch.tensor([f[1] for f in chosen], dtype=torch.long)
        return frame_loss(head, vision.pooler_output, labels)

    params = [*model.model.visual.parameters(), *head.parameters()]
    return _optimise(params, step_loss, steps=steps, lr=lr, label="vision (frame accuracy)")
