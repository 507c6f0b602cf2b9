"""The frame-time target: each visual token told the whole second its frame's label names.

The verifier's claim target (``training.nano.claims``) taught the nano to compare a note's
colour with the frames, but not its times (``docs/nano.md``). To check "from 35 to 38
seconds", the note's ``35`` has to find the frame labelled ``<35.0 seconds>`` and read what
that frame shows. The label's ``35`` is the same token as the note's, so attention can match
the two at once; but the label comes before its frame, and a causal model's label cannot see
what follows it. Only the frame's own visual tokens hold both, once they have read their
label. This target asks them to: after decoder layer ``layer``, each visual token's hidden
state scores the whole seconds 0 to 600 against the input embeddings of their tokens
(detached; or against a head of its own, :func:`time_head`), and the frame's own second is
the class. The time then sits in the visual
tokens in the very form the note's time token has, for a later layer to match. Like the
claim head, it exists only in training.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

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


def time_loss(readout: torch.Tensor, hidden: torch.Tensor, length: int, targets):
    """(cross-entropy of each target's second, share right): the scores are the tapped hidden
    states against `readout` (one row per second, :func:`time_readout`).

    `hidden` holds the last ``hidden.shape[1]`` of the batch's `length` positions (a pass
    after a shared prefix, which never holds an image), `targets` one list per row."""
    offset = length - hidden.shape[1]
    rows = [i for i, row in enumerate(targets) for _ in row]
    positions = [k - offset for row in targets for k, _ in row]
    labels = torch.tensor([s for row in targets for _, s in row])
    scores = hidden[rows, positions].float() @ readout.float().T
    loss = torch.nn.functional.cross_entropy(scores, labels)
    return loss, (scores.argmax(-1) == labels).float().mean().item()
