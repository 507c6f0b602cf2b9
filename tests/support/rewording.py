"""Reword every prompt template (main system prompt, question block, forced-answer line,
sub-agent and verifier prompts) for tests that routing never depends on prompt text."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agents import prompts, sub_turn

_SYNONYMS = {
    "video": "recording",
    "frames": "stills",
    "window": "span",
    "question": "query",
    "Describe": "Report",
    "seconds": "secs",
    "You": "Thou",
    "answer": "reply",
}
_WORD = re.compile(r"(?<![</])\b(" + "|".join(_SYNONYMS) + r")\b(?!>)")  # not inside a tag
PREFIX = "(Reworded.) "


def reword(text: str) -> str:
    """Other words for the same instructions; protocol tags and the tool schema (``crop_video``,
    ``start_time``: no word boundary inside them) stay as they are."""
    return PREFIX + _WORD.sub(lambda m: _SYNONYMS[m[1]], text)


def _reworded_content(content: Any) -> Any:
    if isinstance(content, str):
        return reword(content)
    return [{**p, "text": reword(p["text"])} if p.get("type") == "text" else p for p in content]


def reword_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Patch every template builder the role builders call."""

    def messages(build):
        return lambda *a, **k: [
            {**m, "content": _reworded_content(m["content"])} for m in build(*a, **k)
        ]

    main_system, user_content = prompts.main_system_prompt, prompts.main_user_content
    forced, sub_messages = prompts.forced_answer_text, prompts.subagent_messages
    monkeypatch.setattr(prompts, "main_system_prompt", lambda *a, **k: reword(main_system(*a, **k)))
    monkeypatch.setattr(
        prompts, "main_user_content", lambda *a, **k: _reworded_content(user_content(*a, **k))
    )
    monkeypatch.setattr(prompts, "forced_answer_text", lambda *a, **k: reword(forced(*a, **k)))
    monkeypatch.setattr(prompts, "subagent_messages", messages(sub_messages))
    monkeypatch.setattr(sub_turn, "verify_messages", messages(sub_turn.verify_messages))
