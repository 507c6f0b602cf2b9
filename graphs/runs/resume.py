"""Resume means the same run: a thread id named again must come with the question, video and
settings its run was started with; anything else is refused, saying what differs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from agents.prompts import implied_kind
from graphs.context import Context


class ThreadMismatch(ValueError):
    """A thread id was named with another question, video or settings than its run's."""


def differences(
    stored: Mapping[str, Any],
    stored_settings: Mapping[str, Any] | None,
    *,
    video: str,
    question: str,
    options: Sequence[str],
    kind: str | None,
    prompt: str | None,
    context: Context,
) -> list[str]:
    """What this invocation asks that the thread's run did not, one phrase each (empty when
    it is the same run). ``stored`` is the thread's state, ``stored_settings`` its run's
    settings on the board (None when the board has no record of them)."""
    found = []
    if stored.get("video") and stored["video"] != video:
        found.append(f"the video ({stored['video']} then, {video} now)")
    if stored.get("question") is not None and stored["question"] != question:
        found.append(f"the question ({stored['question']!r} then, {question!r} now)")
    if list(stored.get("options") or []) != list(options):
        found.append(f"the options ({list(stored.get('options') or [])} then, {list(options)} now)")
    asked_kind = implied_kind(options, kind)
    if stored.get("kind") and stored["kind"] != asked_kind:
        found.append(f"the kind ({stored['kind']} then, {asked_kind} now)")
    if (stored.get("prompt") or "") != (prompt or ""):
        found.append("the question block (prompt)")
    if stored_settings:
        now = json.loads(json.dumps(asdict(context)))
        changed = [
            f"{name} ({stored_settings[name]!r} then, {now[name]!r} now)"
            for name in sorted(now)
            if name in stored_settings and stored_settings[name] != now[name]
        ]
        if changed:
            found.append("the settings: " + ", ".join(changed))
    return found


def mismatch(thread_id: str, found: list[str]) -> ThreadMismatch:
    return ThreadMismatch(
        f"thread {thread_id} is another run: it differs in {'; '.join(found)}. A thread id "
        "resumes the run it was started with. To ask this, leave out --thread-id (a new "
        f"thread), or add --new-thread to start thread {thread_id} over."
    )
