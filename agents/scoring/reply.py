"""The final reply, and what each reference harness does to it before its rule reads it.

**The final reply** of a run is the text of the final main-agent turn exactly as the chat API
returned it: the generated text, without anything the client prefilled. When the graph
prefills the Think Prefix ``<think>\\n``, the model's reply starts inside the think block
(``"The cup is red.\\n</think>\\n<answer>B</answer>"``); without the prefill, a reply that
reasons writes its own opener. Evaluation scores this text, as a user of the chat API would
see it and as the references' own scripts would read it from a results file; the graph keeps
the prefilled turn separately for routing and rewards (``agents.protocol.with_prefix``).

How the harnesses read it (``VIEWS``):

- ``as_is``: the official scripts read the whole reply, reasoning and tags included.
- ``lmms_eval``: lmms-eval removes reasoning blocks first, with its CLI's default
  ``--reasoning_tags`` (think and analysis): each complete ``<tag>...</tag>`` block, then,
  when only a closer is left (a prefilled opener), everything up to the last closer; the
  rest is stripped of outer whitespace. Case-sensitive; an opener never closed is kept.
"""

from __future__ import annotations

from collections.abc import Callable

LMMS_EVAL_REASONING_TAGS = (("<think>", "</think>"), ("<analysis>", "</analysis>"))
"""lmms-eval's ``--reasoning_tags`` default (``lmms_eval/__main__.py``, 2c08ee5 and 75571cf)."""


def strip_reasoning(reply: str, tags=LMMS_EVAL_REASONING_TAGS) -> str:
    """The reply as lmms-eval scores it (``lmms_eval.api.reasoning.strip_reasoning_tags``).

    >>> strip_reasoning("<think>B or C?</think>\\nC")
    'C'
    >>> strip_reasoning("It is red, so B.\\n</think>\\n<answer>B</answer>")
    '<answer>B</answer>'
    >>> strip_reasoning("<think>never closed\\nB")
    '<think>never closed\\nB'
    """
    text = reply
    for opener, closer in tags:
        while opener in text and closer in text:
            start = text.find(opener)
            end = text.find(closer, start)
            if end < 0:
                break
            text = text[:start] + text[end + len(closer) :]
        if closer in text and opener not in text:
            text = text.rsplit(closer, 1)[-1]
    return text.strip()


def as_is(reply: str) -> str:
    return reply


VIEWS: dict[str, Callable[[str], str]] = {"as_is": as_is, "lmms_eval": strip_reasoning}
"""Harness -> the text its rule reads, from the final reply."""
