"""The answer-length rule, shared by the length gate, the eval metric and a training penalty.

Small models reading a long board drift to answers of a few tokens ("policy collapse"); an
open-ended answer must cover the question: at least `min_bullets` bullet points or
`min_tokens` tokens, unless the question is inherently short. Tokens here are whitespace
words, so the rule does not depend on any model's tokenizer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_TOKENS = 80
MIN_BULLETS = 6

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+\S", re.MULTILINE)
_SHORT_QUESTION = re.compile(
    r"^\s*(?:how (?:many|much|old|long|far|tall)|what (?:year|date|time|percentage|number|"
    r"colou?r|is the (?:value|name|number|total))|which (?:year|one)|when|who|"
    r"(?:is|are|was|were|does|do|did|can|could|will|has|have|had|should)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AnswerLength:
    tokens: int
    bullets: int


def answer_length(text: str) -> AnswerLength:
    """Whitespace tokens and bullet lines ("- ", "* ", "1. ") of an answer.

    >>> answer_length("- red\\n- blue\\nsome words here")
    AnswerLength(tokens=7, bullets=2)
    """
    return AnswerLength(tokens=len(text.split()), bullets=len(_BULLET.findall(text)))


def inherently_short(question: str) -> bool:
    """Counting, dates, names, yes/no: questions whose full answer is a few words.

    >>> inherently_short("How many people are in the room?"), inherently_short("Explain why")
    (True, False)
    """
    return bool(_SHORT_QUESTION.match(question))


def meets_min_length(
    answer: str, question: str, *, min_tokens: int = MIN_TOKENS, min_bullets: int = MIN_BULLETS
) -> bool:
    """True when the answer covers enough, or the question is inherently short.

    >>> meets_min_length("Because.", "Why does the chart fall after 2020?")
    False
    >>> meets_min_length("12", "How many bars are there?")
    True
    """
    if inherently_short(question):
        return True
    length = answer_length(answer)
    return length.tokens >= min_tokens or length.bullets >= min_bullets
