"""Conversion between the graph's langchain-core messages and OpenAI chat dicts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


def to_openai(messages: Iterable[BaseMessage]) -> list[dict[str, Any]]:
    """OpenAI chat dicts; frame references stay references (see agents.prompts)."""
    out = []
    for message in messages:
        role = _ROLES.get(message.type)
        if role is None:
            raise ValueError(f"cannot send a {message.type!r} message to a chat model")
        content = message.content
        if isinstance(content, list):
            content = [
                dict(part) if isinstance(part, dict) else {"type": "text", "text": part}
                for part in content
            ]
        out.append({"role": role, "content": content})
    return out


def merge_text_parts(parts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Join adjacent text parts, so a text-only message is a single text part."""
    merged: list[dict[str, Any]] = []
    for part in parts:
        if part.get("type") == "text" and merged and merged[-1].get("type") == "text":
            merged[-1] = {"type": "text", "text": merged[-1]["text"] + part["text"]}
        else:
            merged.append(dict(part))
    return merged
