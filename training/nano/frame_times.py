"""The verifier's time targets: each visual token told the whole second its frame's label
names, and each of the note's times asked what the frame it names shows.

The verifier's claim target (``training.nano.claims``) taught the nano to compare a note's
colour with the frames, but not its times (``docs/nano.md``). To check "from 35 to 38
seconds", the note's ``35`` has to find the frame labelled ``<35.0 seconds>`` and read what
that frame shows. The label's ``35`` is the same token as the note's, so attention can match
the two at once; but the label comes before its frame, and a causal model's label cannot see
what follows it. Only the frame's own visual tokens hold both, once they have read their
label. This target asks them to: after decoder layer ``layer``, each visual token's hidden
state scores the whole seconds 0 to 600 against the input embeddings of their tokens
(detached; or against a head of its own, :func:`time_head`), and the frame's own second is
the class. The time then sits in the visual tokens in the very form the note's time token
has, for a later layer to match.

:class:`NoteLookups` asks for the second step: at each of the note's times, what the frame
it names shows. Both targets exist only in training, like the claim head.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from agents import benchmark
from training.nano.claims import ClaimTargets

#: The whole seconds the tokenizer holds as one token each (``training.nano.model``).
SECONDS = range(601)
#: The decoder layer whose output it reads: the first, so that every layer above can match.
LAYER = 0


class FrameTimes:
    """``targets(ids)``: (position, second) for each visual token in `ids`, the second that
    the label before its frame names (``<35.5 seconds>``: 35)."""

    def __init__(self, tokenizer, image_token_id: int, vision_end_id: int):
        vocab = tokenizer.get_vocab()
        missing = [s for s in SECONDS if str(s) not in vocab]
        if missing:
            raise ValueError(f"the tokenizer lacks whole-second tokens, e.g. {missing[:3]}")
        self.ids = torch.tensor([vocab[str(s)] for s in SECONDS])
        self.second = {int(token): s for s, token in zip(SECONDS, self.ids.tolist(), strict=True)}
        #: A second as a note writes it: the number alone, or " 94" where the tokenizer holds
        #: it whole after a space (``rebuild --spaced-seconds``).
        self.written = self.second | {vocab[f" {s}"]: s for s in SECONDS if f" {s}" in vocab}
        self.opens = {
            t
            for name, t in vocab.items()
            if tokenizer.convert_tokens_to_string([name]).endswith("<")
        }
        self.image, self.end = image_token_id, vision_end_id

    def __call__(self, ids: Sequence[int]) -> list[tuple[int, int]]:
        targets, second, previous = [], None, None
        for position, token in enumerate(ids):
            if previous in self.opens and token in self.second:
                second = self.second[token]  # a label's first number: its whole second
            elif token == self.end:
                second = None
            elif token == self.image and second is not None:
                targets.append((position, second))
            previous = token
        return targets


class NoteLookups:
    """``targets(row, ids)``: (position, what the frame shows) for each time in the row's note
    that names one of its frames: that frame's colour and shape (``row["frame_labels"]``) as
    one class, ``colour * 5 + shape`` (0 for an empty frame).

    The link a time's check needs: the note's ``35`` has to read what the frame labelled
    ``<35.0 seconds>`` shows. Every time of every note with a span gets a target, right or
    wrong, so the link is asked for densely, not only where a span was moved."""

    CLASSES = (len(benchmark.COLOURS) + 1) * (len(benchmark.SHAPES) + 1)

    def __init__(self, times: FrameTimes, notes: ClaimTargets):
        self.times, self.notes = times, notes

    def __call__(self, row: Mapping[str, Any], ids: Sequence[int]) -> list[tuple[int, int]]:
        shown, seconds, previous = row.get("frame_labels") or [], [], None
        for position, second in self.times(ids):
            if previous is None or position != previous + 1:  # a frame's first visual token
                seconds.append(second)
            previous = position
        targets = []
        for position in self.notes.note_positions(ids):
            second = self.times.written.get(ids[position])
            if second in seconds and len(shown) == len(seconds):
                colour, shape = shown[seconds.index(second)]
                targets.append((position, colour * (len(benchmark.SHAPES) + 1) + shape))
        return targets


def lookup_head(model) -> torch.nn.Linear:
    """The training-only readout of :class:`NoteLookups`' classes."""
    width = model.config.text_config.hidden_size
    return torch.nn.Linear(width, NoteLookups.CLASSES, bias=False)


def time_readout(model, times: FrameTimes, head: torch.nn.Linear | None = None) -> torch.Tensor:
    """The vectors each second is scored against: the seconds' input embeddings, detached so
    that the target moves the hidden states and not the tokens, or with `head` (a
    training-only ``d -> 601`` linear map) its rows, which the target trains."""
    if head is not None:
        return head.weight
    return model.model.language_model.embed_tokens.weight[times.ids].detach()


def time_head(model) -> torch.nn.Linear:
    """A training-only readout for the target, in a basis of its own: the labels' tokens do
    not carry it, so a later layer matching the note's time finds the frames, not the labels."""
    return torch.nn.Linear(model.config.text_config.hidden_size, len(SECONDS), bias=False)


def position_loss(readout: torch.Tensor, hidden: torch.Tensor, length: int, targets):
    """(cross-entropy of each target's class, share right): the scores are the tapped hidden
    states against `readout`, one row per class (a second: :func:`time_readout`; what a
    frame shows: :func:`lookup_head`).

    `hidden` holds the last ``hidden.shape[1]`` of the batch's `length` positions (a pass
    after a shared prefix, which never holds an image), `targets` one list per row."""
    offset = length - hidden.shape[1]
    rows = [i for i, row in enumerate(targets) for _ in row]
    positions = [k - offset for row in targets for k, _ in row]
    labels = torch.tensor([s for row in targets for _, s in row])
    scores = hidden[rows, positions].float() @ readout.float().T
    loss = torch.nn.functional.cross_entropy(scores, labels)
    return loss, (scores.argmax(-1) == labels).float().mean().item()
