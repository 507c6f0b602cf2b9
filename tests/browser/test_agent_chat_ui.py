"""LangChain's Agent Chat UI, in headless Chromium, against `langgraph dev` and paravt-nano.

A user names the demo video in the chat box and asks about it; the page must show the main
agent's crop_video calls as tool-call cards (not `<tool_call>` text), each sub-agent's note as
the tool result of its call, and then a plain-words answer; "Hide Tool Calls" must hide the
cards; a follow-up on the same thread is answered too, and a third question about when.
Each answer must be right: blue, the circle, the circle's span. Screenshots go to
build/browser-artifacts/.
"""

from __future__ import annotations

import re

import pytest

from agents.benchmark import COLOURS, SHAPES
from agents.scoring.intervals import iou, parse_interval
from agents.synthetic import read_manifest
from app import DEMO_DIR
from tests.browser.chat_page import ChatPage

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.slow]

QUESTION = "assets/demo/needle.mp4 What colour is the circle that appears in the video?"
FOLLOW_UP = "What shape appears in the video?"
WHEN = "When does the blue circle appear?"
#: The demo video's truth (the question names the video as a user types it, relative).
DEMO_MANIFEST = DEMO_DIR / "needle.json"
PROTOCOL_TAG = re.compile(r"</?(tool_call|tool_response|answer|think)>")


def ask(chat: ChatPage, text: str, turn: str, *, humans: int, timeout: float = 300) -> None:
    """Type `text`, send it, and wait for the run it starts to finish without an error."""
    chat.send(text)
    assert chat.wait_for_reply(humans, timeout), chat.explain(
        f"{turn}: no finished reply within {timeout:.0f} s"
    )
    status, toasts = chat.runs()[0].get("status"), chat.toasts()
    assert status == "success" and not toasts, chat.explain(
        f"{turn}: the run ended with status {status!r}"
        + (" and the UI shows an error toast" if toasts else "")
    )


def after_last_human(transcript: list[dict]) -> list[dict]:
    last = max(i for i, e in enumerate(transcript) if e["kind"] == "human")
    return transcript[last + 1 :]


def check_answered(chat: ChatPage, turn: str) -> dict:
    """The reply to the latest question ends in an AI message with plain-words text."""
    reply = after_last_human(chat.transcript())
    said = [e for e in reply if e["kind"] == "ai" and e["text"]]
    assert said and said[-1] is reply[-1], chat.explain(
        f"{turn}: the UI shows no AI answer after the question (the reply should end with an "
        "AI message whose text is the answer)"
    )
    answer = said[-1]
    assert not PROTOCOL_TAG.search(answer["text"]), chat.explain(
        f"{turn}: the answer shows raw protocol tags; it should be the answer in plain words"
    )
    return answer


def named(text: str, names: tuple[str, ...]) -> set[str]:
    """Which of `names` the text says, as whole words."""
    return set(re.findall(r"[a-z]+", text.lower())) & set(names)


def test_chat_ui_shows_tool_calls_notes_and_answers_a_follow_up(stack, browser_page, artifacts):
    chat = ChatPage(browser_page, stack, artifacts)
    chat.open("paravt")
    chat.screenshot("agent-chat-ui-0-empty")

    ask(chat, QUESTION, "first question", humans=1)
    chat.screenshot("agent-chat-ui-1-answer")
    transcript = chat.transcript()
    everything = " ".join(e.get("text", "") for e in transcript)
    assert not PROTOCOL_TAG.search(everything), chat.explain(
        "raw <tool_call>/<answer>/<think> text is on the page: tool calls must render as "
        "tool-call cards (AIMessage.tool_calls), not as message text"
    )

    calls = [c for e in transcript if e["kind"] == "ai" for c in e["tool_calls"]]
    assert calls, chat.explain(
        "no tool-call cards: the main agent's crop_video calls should render as Agent Chat "
        "UI's tool-call cards (AIMessage.tool_calls)"
    )
    assert all(
        c["name"] == "crop_video" and {"start_time", "end_time"} <= c["args"].keys() for c in calls
    ), chat.explain("a tool-call card is not crop_video(start_time, end_time)")

    notes = {e["id"]: e for e in transcript if e["kind"] == "tool"}
    unanswered = [c["id"] for c in calls if c["id"] not in notes]
    assert not unanswered, chat.explain(
        f"tool calls {unanswered} have no tool result: each sub-agent's note should follow as a "
        "ToolMessage carrying its call's id"
    )
    assert all(notes[c["id"]]["text"] for c in calls), chat.explain("a tool result is empty")
    answer = check_answered(chat, "first question")
    assert named(answer["text"], COLOURS) == {"blue"}, chat.explain(
        f"first question: the answer {answer['text']!r} should name the circle's colour, "
        "blue, and no other colour (the demo's circle is blue; no options were given)"
    )
    thread = chat.thread_id

    chat.hide_tool_calls(True)
    chat.screenshot("agent-chat-ui-2-tool-calls-hidden")
    hidden = chat.transcript()
    shown_cards = [e for e in hidden if e["kind"] == "tool" or e.get("tool_calls")]
    assert not shown_cards, chat.explain("'Hide Tool Calls' left tool calls or results shown")
    assert any(e["kind"] == "ai" and e["text"] == answer["text"] for e in hidden), chat.explain(
        "'Hide Tool Calls' hid the answer too"
    )
    chat.hide_tool_calls(False)

    ask(chat, FOLLOW_UP, "follow-up", humans=2)
    chat.screenshot("agent-chat-ui-3-follow-up")
    assert chat.thread_id == thread, chat.explain(
        f"the follow-up moved to another thread ({thread} -> {chat.thread_id})"
    )
    humans = [e["text"] for e in chat.transcript() if e["kind"] == "human"]
    assert humans == [QUESTION, FOLLOW_UP], chat.explain(
        "the thread should show the two questions, in order"
    )
    follow_up = check_answered(chat, "follow-up")
    assert "circle" in named(follow_up["text"], SHAPES), chat.explain(
        f"follow-up: the answer {follow_up['text']!r} should name the shape, a circle"
    )

    ask(chat, WHEN, "when", humans=3)
    chat.screenshot("agent-chat-ui-4-when")
    when = check_answered(chat, "when")
    (needle,) = read_manifest(DEMO_MANIFEST)[0].needles
    span = parse_interval(when["text"])
    assert span and iou(span, (needle.start, needle.end)) >= 0.5, chat.explain(
        f"when: the answer {when['text']!r} should give the circle's span, "
        f"{needle.start:g} to {needle.end:g} seconds (IoU at least 0.5)"
    )
