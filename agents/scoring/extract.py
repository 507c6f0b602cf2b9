"""Pick the final answer text out of one assistant turn, in the recipe's order (the RL
reward's, and the needle benchmark's): the answer block, else the text after ``</think>``,
else the last line. Evaluation of the public benchmarks reads replies as each harness does
instead (:mod:`agents.scoring.reply`).

The rules, decided from the paper's output contract (think, then tool calls or one answer)
and its principle that format pays for format and accuracy for the answer:

1. **Answer blocks** (read by :func:`agents.protocol.parse`): only blocks after the think
   count. A block inside the think is reasoning; a block before the think is outside the
   turn (the parser reads from the think on). One answer, or several that agree (the same
   text, case and spacing aside), is the answer. **Answers that conflict give no answer**:
   ``<answer>A</answer><answer>B</answer>`` hedges, and credit for it would reward listing
   every option. Blank blocks alone give ``""``: an empty answer earns nothing from the
   text around it.
2. **A turn that calls a tool and writes no answer block has no answer**: it asked for
   evidence, and the times or options named in its reasoning or calls are not an answer.
3. Else, when the turn closes its think (``</think>``, with or without an opener: a
   prefilled ``<think>`` or a model that dropped it), the text after the closer with chat
   special tokens and stray protocol tags removed (``""`` when nothing is left).
4. Else the last non-empty line of the whole text, cleaned the same way (bare replies such as
   ``"B"`` or ``"...\\nThe answer is B"``, and turns whose think never closed).
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


def _agreed(answers: tuple[str, ...]) -> str:
    """The answer the non-blank blocks agree on; "" when they conflict or are all blank."""
    given = [a for a in answers if a]
    keys = {" ".join(a.lower().split()) for a in given}
    return given[-1] if len(keys) == 1 else ""


def extract_answer(text: str) -> str:
    """The answer text of one turn, stripped; ``""`` when there is none. Never raises on a str.

    >>> extract_answer("<think>\\nThe cup moves.\\n</think>\\n<answer> B </answer>")
    'B'
    >>> extract_answer("It is red.\\n</think>\\nThe answer is (C).")
    'The answer is (C).'
    >>> extract_answer("Let me look.\\nThe car is red.\\nB")
    'B'
    >>> extract_answer("<think>\\nIt is A or B.\\n</think>\\n<answer>A</answer><answer>B</answer>")
    ''
    >>> extract_answer('Start near 101.5 s.\\n<tool_call>{"name": "crop_video"}</tool_call>')
    ''
    """
    turn = parse(text)
    if turn.answer is not None:
        return _agreed(turn.answers)
    if turn.tool_calls:
        return ""
    opener = text.find(_OPEN)
    closer = text.find(_CLOSE, opener + len(_OPEN) if opener >= 0 else 0)
    if closer >= 0:
        return _clean(text[closer + len(_CLOSE) :]).strip()
    lines = (line.strip() for line in reversed(_clean(text).splitlines()))
    return next((line for line in lines if line), "")
