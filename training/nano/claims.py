"""The verifier's claim target: at each fact of a verifier row's note, whether the frames bear
it out.

Trained on its verdict alone, the verifier learnt whether a window shows a needle, then
guessed between a right and a misread sighting (``docs/nano.md``). Neither the note's colour
nor the frames' says anything about the verdict alone; only whether they agree does. This
target asks for that agreement where attention computes it directly: at the note's own
content tokens (a colour, a shape, a time), after the text model's layer :data:`LAYER`, a
linear head scores whether the token agrees with the frames. The verdict then only has to
gather the scores. The head exists only in training, like the frame head.

A token's label comes from the row's right note (``right_note``, written by
``training.nano.verifier_rows``): 1 where the row's note says what the right note says at that
token, 0 where a misread or invented note says something else. Rows without a right note
(the verifier's traced calls) have no targets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from agents.verify import NOTE_CLOSE, NOTE_OPEN

#: The target reads the output of this decoder layer (0-based; paravt-nano has 4), leaving
#: the layers above it to gather the scores into the verdict.
LAYER = 1


class ClaimTargets:
    """``targets(row, ids)``: (position, label) for each content token of the note in `ids`
    (the row's encoded tokens)."""

    def __init__(self, tokenizer, content: torch.Tensor):
        self.tokenizer, self.content = tokenizer, content
        self._pieces: dict[int, str] = {}
        self._right: dict[str, list[int]] = {}

    def _piece(self, token: int) -> str:
        if token not in self._pieces:
            name = self.tokenizer.convert_ids_to_tokens(token)
            self._pieces[token] = self.tokenizer.convert_tokens_to_string([name])
        return self._pieces[token]

    def note_positions(self, ids: Sequence[int]) -> list[int]:
        """Positions of the tokens that lie wholly within the request's note."""
        spans, text = [], ""
        for token in ids:
            piece = self._piece(token)
            spans.append((len(text), len(text) + len(piece)))
            text += piece
        start = text.rfind(NOTE_OPEN)
        if start < 0:
            return []
        start += len(NOTE_OPEN)
        end = text.find(NOTE_CLOSE, start)
        return [k for k, (a, b) in enumerate(spans) if a >= start and b <= end]

    def __call__(self, row: Mapping[str, Any], ids: Sequence[int]) -> list[tuple[int, float]]:
        right = row.get("right_note")
        if right is None:
            return []
        if right not in self._right:
            self._right[right] = self.tokenizer(right, add_special_tokens=False)["input_ids"]
        truth = self._right[right]
        positions = self.note_positions(ids)
        said = [ids[k] for k in positions]
        if len(truth) - len(said) in (0, 1):
            # one fact swapped in place: compare token by token (the note's last token may
            # have merged with the request's next line, so `said` can be one shorter)
            agrees = [s == t for s, t in zip(said, truth, strict=False)]
        else:  # another note altogether (a sighting invented on an empty window)
            agrees = [s in set(truth) for s in said]
        return [
            (k, float(ok))
            for k, s, ok in zip(positions, said, agrees, strict=True)
            if self.content[s]
        ]


def claim_head(model) -> torch.nn.Linear:
    """The training-only head: a text hidden state -> the logit that its fact holds."""
    return torch.nn.Linear(model.config.text_config.hidden_size, 1)


@dataclass
class LayerTap:
    """The last output of the tapped decoder layer: the positions of the pass that ran last
    (after a shared prefix, the rows' own positions only)."""

    hidden: torch.Tensor | None = None


@contextmanager
def tap_layer(model, index: int = LAYER):
    """Record the output of text decoder layer `index` while the block runs."""
    tap = LayerTap()

    def keep(_module, _inputs, output):
        tap.hidden = output[0] if isinstance(output, tuple) else output

    handle = model.model.language_model.layers[index].register_forward_hook(keep)
    try:
        yield tap
    finally:
        handle.remove()


def claim_weights(
    targets: Sequence[Sequence[tuple[int, float]]], wrong_weight: float
) -> list[float]:
    """Each target's weight, flattened: `wrong_weight` for a fact that does not hold, 1 for one
    that does (most of a note's facts hold, so an even weight leaves the wrong ones a small
    share of the loss)."""
    return [1.0 if y else wrong_weight for row in targets for _, y in row]


def claim_loss(
    head,
    hidden: torch.Tensor,
    length: int,
    targets: Sequence[Sequence[tuple[int, float]]],
    wrong_weight: float = 1.0,
):
    """(binary cross-entropy of the head's scores at the targets' positions, weighted by
    :func:`claim_weights`, share right).

    `hidden` holds the last ``hidden.shape[1]`` of the batch's `length` positions (a pass
    after a shared prefix), `targets` one list per row of the batch."""
    offset = length - hidden.shape[1]
    rows = [i for i, row in enumerate(targets) for _ in row]
    positions = [k - offset for row in targets for k, _ in row]
    labels = torch.tensor([y for row in targets for _, y in row])
    weights = torch.tensor(claim_weights(targets, wrong_weight))
    scores = head(hidden[rows, positions]).squeeze(-1).float()
    each = torch.nn.functional.binary_cross_entropy_with_logits(scores, labels, reduction="none")
    loss = (each * weights).sum() / weights.sum()
    return loss, ((scores > 0).float() == labels).float().mean().item()
