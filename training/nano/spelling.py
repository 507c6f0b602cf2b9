"""The sub-agent's own words in the base's spelling of a spaced second.

With ``rebuild --spaced-seconds`` the text "from 94 to 99" is tokenized "from", " 94", " to",
" 99": the main agent, copying a span out of a note, then finds a different key before each
number. But the sub-agent writes that span from its frames' times ("<95.6 seconds>"), and the
base learnt to write it as a space, then "94". Trained on " 94" instead, it had to relearn
every span one token earlier, and the main agent's gain was spent on it (``docs/nano.md``).

A text has more than one tokenization, and what a model generates need not be the one a
tokenizer would choose: "Ġ" then "94" decodes to the same " 94". So the sub-agent's targets
can keep the base's spelling while everything any agent reads (its prompt, the notes on the
board, which the server tokenizes afresh) is spelt the new way. :class:`SubAgentSpelling`
collates rows so: in a sub-agent row each spaced second that is a target becomes the two
tokens the base spells it with, both targets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from training.collate import Encoded, FramesCollator
from training.nano.model import SPACED_SECONDS

#: The role of the rows whose targets are respelt (``training.nano.data.sft_rows``).
ROLE = "sub_agent"


def base_spellings(tokenizer, tokens: Sequence[str] = SPACED_SECONDS) -> dict[int, tuple[int, int]]:
    """Each of `tokens` the tokenizer holds whole -> the ids of the space and the word after it.

    Raises ValueError when the tokenizer holds none of them (the flag without
    ``--spaced-seconds``) or cannot spell one as a space and a whole word."""
    vocab = tokenizer.get_vocab()
    space = tokenizer.convert_tokens_to_ids("Ġ")
    pairs = {}
    for token in tokens:
        if token not in vocab:
            continue
        word = token.removeprefix(" ")
        pair = (space, vocab.get(word))
        if None in pair or tokenizer.decode(list(pair)) != token:
            raise ValueError(f"the tokenizer cannot spell {token!r} as a space and {word!r}")
        pairs[vocab[token]] = pair
    if not pairs:
        raise ValueError(
            "the tokenizer holds no spaced second whole: respelling the sub-agent's targets "
            "needs a tokenizer extended by rebuild --spaced-seconds"
        )
    return pairs


def respell(encoded: Encoded, pairs: Mapping[int, tuple[int, int]]) -> Encoded:
    """`encoded` with each target token in `pairs` replaced by its two tokens, both targets.
    Tokens the loss does not see (what the row reads) keep the tokenizer's spelling."""
    ids: list[int] = []
    mask: list[int] = []
    for token, target in zip(encoded.input_ids, encoded.loss_mask, strict=True):
        spelt = pairs.get(token) if target else None
        ids += spelt or [token]
        mask += [target] * (2 if spelt else 1)
    return Encoded(ids, mask, encoded.pixel_values, encoded.image_grid_thw)


@dataclass
class SubAgentSpelling(FramesCollator):
    """:class:`FramesCollator` whose sub-agent rows' targets spell each spaced second as the
    base did (:func:`respell`); every other row is collated as the server tokenizes it."""

    pairs: dict[int, tuple[int, int]] = field(init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.pairs = base_spellings(self.tokenizer)

    def encode_row(self, example: Mapping[str, Any]) -> Encoded:
        encoded = super().encode_row(example)
        return respell(encoded, self.pairs) if example.get("role") == ROLE else encoded
