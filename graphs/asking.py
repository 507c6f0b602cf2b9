"""Which question a graph invocation asks, about which video (the prepare node's reading).

Two inputs are accepted: a chat (``messages``: a new human message is a new question; the
first one names the video, `graphs.chat_input`) and the older ``video`` + ``question``
fields (with ``options``, ``kind``, ``prompt``), as the CLI and the evaluation runner send.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from langchain_core.messages import HumanMessage

from graphs.chat_input import (
    MediaRefused,
    checked_video,
    message_text,
    named_media,
    no_video_message,
    split_question,
)
from graphs.context import Context
from graphs.state import State


@dataclass(frozen=True)
class Question:
    run_id: str
    video: str
    question: str
    options: tuple[str, ...]
    kind: str
    prompt: str
    human: HumanMessage | None  # the message to add (the older input has none yet)
    asked: int  # human messages on the thread once this one is asked
    system: str | None = None  # a dataset's own system prompt (the release's RL rows)
    source: dict | None = None  # where the question came from (a harness's task and doc id)


def humans(state: State) -> list:
    return [m for m in state.get("messages", []) if m.type == "human"]


def next_question(state: State, ctx: Context, roots: Sequence[Path]) -> Question:
    """The question to run now; MediaRefused (with what to do) when there is none to run."""
    asked, said = state.get("asked", 0), humans(state)
    if len(said) > asked:
        return _chat_question(state, ctx, roots, said[-1], len(said))
    if asked == 0 and state.get("question") and state.get("video"):
        options = tuple(state.get("options") or ())
        text = state["question"]
        return Question(
            run_id=state.get("run_id") or uuid.uuid4().hex[:12],
            video=str(state["video"]),
            question=text,
            options=options,
            kind=state.get("kind") or ("multiple_choice" if options else "open_ended"),
            prompt=state.get("prompt") or "",
            human=HumanMessage(content=text),
            asked=1,
            system=state.get("system") or None,
            source=state.get("source") or None,
        )
    raise MediaRefused(
        "There is no new question on this thread: send a message with your question."
    )


def _chat_question(state, ctx, roots, human, asked: int) -> Question:
    text = message_text(human.content)
    video = None
    if asked > 1 or state.get("asked", 0) > 0:  # a follow-up: the same video unless it names one
        found, rest = named_media(text, roots)
        video, text = (found, rest) if found else (state.get("video"), text)
    else:
        if ctx.default_video:
            video = checked_video(ctx.default_video, roots)
        elif state.get("video"):  # the input's field: a caller's path (absolute is trusted)
            given = str(state["video"])
            video = given if Path(given).is_absolute() else checked_video(given, roots)
        else:
            video, text = named_media(text, roots)
    if not video:
        raise MediaRefused(no_video_message(roots))
    first = state.get("asked", 0) == 0  # fields sent with the first message apply to it
    asked_now = split_question(text)
    options = tuple(state.get("options") or ()) if first else ()
    options = options or asked_now.options
    kind = (state.get("kind") if first else None) or (
        "multiple_choice" if options else "open_ended"
    )
    run_id = state.get("run_id") if first else None
    return Question(
        run_id=run_id or uuid.uuid4().hex[:12],
        video=str(video),
        question=asked_now.question,
        options=options,
        kind=kind,
        prompt=(state.get("prompt") or "") if first else "",
        human=None,
        asked=asked,
        system=(state.get("system") or None) if first else None,
        source=(state.get("source") or None) if first else None,
    )
