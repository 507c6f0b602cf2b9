"""Pick the final answer text out of one assistant turn, in the recipe's order.

1. The chosen ``<answer>`` block, read by :func:`agents.protocol.parse` (the last non-empty
   block; blocks written inside a closed think do not count). When every answer block is
   blank the answer is ``""``: a turn that wrote an empty answer gets no credit from the
   text around it.
2. Else, when the turn closes its think (``</think>``; a completion whose ``<think>`` was
   prefilled in the prompt counts too), the text after that closer with ``<tool_call>`` and
   ``<tool_response>`` blocks, chat special tokens (``<|im_end|>``) and stray protocol tags
   removed. This result is final even when empty: a turn that closed its think and then
   only called tools has no answer, and its reasoning is not read as one.
3. Else the last non-empty line of the whole text, cleaned the same way (bare replies
   such as ``"B"`` or ``"...\\nThe answer is B"``, and turns whose think never closed).
"""

from __future__ import annotations

import re

from agents.protocol import parse

_OPEN, _CLOSE = "<think>", "</think>"
_BLOCK_RE = re.compile(r"<(tool_call|tool_response)>.*?(?:</\1>|\Z)", re.DOTALL)
_SPECIAL_RE = re.compile(r"<\|[^|<>\s]{1,40}\|>")
_TAG_RE = re.compile(r"</?(?:think|tool_call|answer|tool_response)>")


def _clean(text: str) -> str:
    """Drop tool blocks (an unclosed one runs to the end), special tokens and bare tags."""
    text = _BLOCK_RE.sub("\n", text)
    text = _SPECIAL_RE.sub("", text)
    return _TAG_RE.sub("\n", text)


def extract_answer(text: str) -> str:
    """The answer text of one turn, stripped; ``""`` when there is none. Never raises on a str.

    >>> extract_answer("<think>\\nThe cup moves.\\n</think>\\n<answer> B </answer>")
    'B'
    >>> extract_answer("<think>\\nIt is red.\\n</think>\\nThe answer is (C).")
    'The answer is (C).'
    >>> extract_answer("Let me look.\\nThe car is red.\\nB")
    'B'
    >>> extract_answer("<think>\\nLook closer.\\n</think>\\n<tool_call>{}</tool_call>")
    ''
    """
    turn = parse(text)
    if turn.answer is not None:
        return turn.answer
    opener = text.find(_OPEN)
    closer = text.find(_CLOSE, opener + len(_OPEN) if opener >= 0 else 0)
    if closer >= 0:
        return _clean(text[closer + len(_CLOSE) :]).strip()
    lines = (line.strip() for line in reversed(_clean(text).splitlines()))
    return next((line for line in lines if line), "")
