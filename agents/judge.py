"""The judge's request and its verdict: a benchmark's grading messages (MMVU's official judge,
``evals.scorers.mmvu.judge_messages``) sent to a model as the ``judge`` role, and the
structured verdict read back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from agents.client.completion import ChatModel
from agents.requests import ModelRequest, SamplingParams

#: Enough for the judge's JSON object with a short extracted answer.
MAX_JUDGE_TOKENS = 256
_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)
_PYTHON_BOOL = re.compile(r"(?<=:)\s*(True|False)\b")


def judge_request(
    messages: Sequence[Mapping[str, Any]], *, max_tokens: int = MAX_JUDGE_TOKENS
) -> ModelRequest:
    """The grading messages as a request: greedy, as graders are run."""
    return ModelRequest(
        role="judge",
        messages=[dict(m) for m in messages],
        params=SamplingParams(temperature=0.0, max_tokens=max_tokens),
    )


def read_verdict(text: str) -> tuple[str, bool] | None:
    """``(extracted_answer, correct)`` from the judge's structured reply; None when it wrote
    no readable object (the item then counts as ungraded, never as right).

    >>> read_verdict('Sure: {"extracted_answer": "B", "correct": True}')
    ('B', True)
    >>> read_verdict("The answer is correct.") is None
    True
    """
    for found in _OBJECT.finditer(text):
        raw = _PYTHON_BOOL.sub(lambda m: " " + m[1].lower(), found[0])
        try:
            body = json.loads(raw)
        except ValueError:
            continue
        if isinstance(body, dict) and isinstance(body.get("correct"), bool):
            return str(body.get("extracted_answer") or ""), body["correct"]
    return None


async def judge(llm: ChatModel, messages: Sequence[Mapping[str, Any]]) -> tuple[str, bool] | None:
    """Ask ``llm`` to grade once; its verdict, or None when unreadable."""
    completion = await llm.complete(judge_request(messages))
    return read_verdict(completion.text)
