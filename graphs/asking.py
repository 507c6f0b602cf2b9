"""Which question a graph invocation asks, about which video (the prepare node's reading).

Two inputs are accepted: a chat (``messages``: a new human message is a new question; the
first one names the video, `graphs.chat_input`) and the older ``video`` + ``question``
fields (with ``options``, ``kind``, ``prompt``), as the CLI and the evaluation runner send.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from langchain_core.messages import HumanMessage

from agents.prompts import implied_kind
from agents.question import Question
from agents.question_rules import check_question
from graphs.admission import MediaRefused, MediaRoots
from graphs.chat_input import message_text, split_question
from graphs.context import Context
from graphs.state import State


@dataclass(frozen=True)
class Asked:
    """The question to run now, with the run it starts."""

    run_id: str
    video: str
    ask: Question
    human: HumanMessage | None  # the message to add (the older input has none yet)
    asked: int  # human messages on the thread once this one is asked
    source: dict | None = None  # where the question came from (a harness's task and doc id)


def humans(state: State) -> list:
    return [m for m in state.get("messages", []) if m.type == "human"]


def next_question(state: State, ctx: Context, media: MediaRoots) -> Asked:
    """The question to run now; MediaRefused (with what to do) when there is none to run,
    QuestionRefused (`agents.question_rules`) when it cannot be asked as it is."""
    asked, said = state.get("asked", 0), humans(state)
    if len(said) > asked:
        question = _chat_question(state, ctx, media, said[-1], len(said))
    elif asked == 0 and state.get("video") and "question" in state:
        question = _input_question(state, media)
    else:
        raise MediaRefused(
            "There is no new question on this thread: send a message with your question."
        )
    ask = question.ask
    check_question(ask.question, ask.options, ask.kind, prompt=ask.prompt)
    return question


def _input_question(state: State, media: MediaRoots) -> Asked:
    """The older ``video`` + ``question`` input (the CLI's, evaluation's)."""
    options = tuple(state.get("options") or ())
    text = state["question"]
    video = media.admit(str(state["video"]))
    ask = Question(
        question=text,
        options=options,
        kind=implied_kind(options, state.get("kind")),
        prompt=state.get("prompt") or None,
        system=state.get("system") or None,
    )
    return Asked(
        run_id=state.get("run_id") or uuid.uuid4().hex[:12],
        video=str(video),
        ask=ask,
        human=HumanMessage(content=text or ""),
        asked=1,
        source=state.get("source") or None,
    )


def _chat_question(state, ctx, media: MediaRoots, human, asked: int) -> Question:
    text = message_text(human.content)
    video = None
    if asked > 1 or state.get("asked", 0) > 0:  # a follow-up: the same video unless it names one
        found, rest = media.named_in(text)
        video, text = (found, rest) if found else (state.get("video"), text)
    else:
        if ctx.default_video:
            video = media.admit(ctx.default_video)
        elif state.get("video"):  # the input's field: admitted by the same rule as text
            video = media.admit(str(state["video"]))
        else:
            video, text = media.named_in(text)
    if not video:
        raise MediaRefused(media.no_video())
    first = state.get("asked", 0) == 0  # fields sent with the first message apply to it
    asked_now = split_question(text)
    options = tuple(state.get("options") or ()) if first else ()
    options = options or asked_now.options
    kind = implied_kind(options, state.get("kind") if first else None)
    run_id = state.get("run_id") if first else None
    ask = Question(
        question=asked_now.question,
        options=options,
        kind=kind,
        prompt=(state.get("prompt") or None) if first else None,
        system=(state.get("system") or None) if first else None,
    )
    return Asked(
        run_id=run_id or uuid.uuid4().hex[:12],
        video=str(video),
        ask=ask,
        human=None,
        asked=asked,
        source=(state.get("source") or None) if first else None,
    )
