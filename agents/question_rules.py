"""What a question must be before anything runs: asked, its options well formed, its text text.

Every way a question arrives (the CLI, a chat message, the ``question`` input of a LangGraph
client, a benchmark record) goes through `check_question`; a question that fails is refused
with one message saying what is wrong and what to do, before a frame is decoded or a request
sent. User text never becomes protocol: a chat-template control token (``<|im_end|>``,
``<|im_start|>``: the ``<|...|>`` tokens of Qwen's, Llama 3's and Phi's templates) would be
read by SGLang or vLLM as a real turn boundary, and a vision placeholder (``<|image_pad|>``)
as an image slot, so both are refused here; the local server also encodes any that reach it
as plain text (`serving.engine`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: The control tokens of ChatML-family chat templates (Qwen's, Llama 3's, Phi's).
CONTROL_TOKEN = re.compile(r"<\|[A-Za-z0-9_.:-]{1,40}\|>")
VISION_TOKENS = ("vision_start", "vision_end", "image_pad", "video_pad", "vision_pad")
#: An option as the prompts show it: a letter, then ". ", ") " or ": ", then its text.
OPTION = re.compile(r"^\(?(?P<letter>[A-J])[.):]\s+(?P<text>\S.*)$")
KINDS = ("multiple_choice", "grounding", "open_ended")


class QuestionRefused(ValueError):
    """The question cannot be run as given; the message says what to change."""


def check_question(
    question: str | None,
    options: Sequence[str] = (),
    kind: str | None = None,
    *,
    prompt: str | None = None,
) -> None:
    """Raise QuestionRefused unless the question can be asked as given. With ``prompt`` (a
    benchmark's own question block, sent in place of the question and its options) only the
    prompt is sent, so only its text is checked: a benchmark's records are its own, blank
    questions included.

    >>> check_question("What colour?", ["A. red", "B. blue"], "multiple_choice")
    >>> try:
    ...     check_question("Which?", ["A. red", "B. blue<|im_end|>"])
    ... except QuestionRefused as refused:
    ...     print(refused)
    an option contains <|im_end|>, a chat-template control token (a turn boundary to the \
model): write it without that token
    """
    if prompt:
        token_problem(prompt, "the question block")
        return
    if not isinstance(question, str) or not question.strip():
        raise QuestionRefused(
            'the question is blank: ask something about the video, e.g. "What colour is the '
            'circle?"'
        )
    if kind is not None and kind not in KINDS:
        raise QuestionRefused(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    for where, text in [("the question", question), *(("an option", o) for o in options)]:
        token_problem(text, where)
    if options:
        _check_options(options, kind)
    elif kind == "multiple_choice":
        raise QuestionRefused(
            'a multiple_choice question needs its options, such as "A. red" and "B. blue" '
            "(--option, once each, on the command line); or leave out the kind"
        )


def token_problem(text: str, where: str = "the text") -> None:
    """Raise QuestionRefused if ``text`` holds a chat-template control token."""
    found = CONTROL_TOKEN.search(text)
    if found is None:
        return
    token = found.group()
    what = (
        "a vision placeholder (an image slot to the model)"
        if token.strip("<|>") in VISION_TOKENS
        else "a chat-template control token (a turn boundary to the model)"
    )
    raise QuestionRefused(f"{where} contains {token}, {what}: write it without that token")


def _check_options(options: Sequence[str], kind: str | None) -> None:
    if kind not in (None, "multiple_choice"):
        raise QuestionRefused(
            f"options were given for a {kind} question: leave them out, or ask a "
            "multiple_choice question"
        )
    if len(options) < 2:
        raise QuestionRefused(f"one option ({options[0]!r}) is no choice: give two or more")
    seen: set[str] = set()
    for option in options:
        match = OPTION.match(option.strip()) if isinstance(option, str) else None
        if match is None or "\n" in option or "\r" in option:
            raise QuestionRefused(
                f"option {option!r} is malformed: write each option on one line as a letter "
                'and its text, such as "A. red" or "(B) blue"'
            )
        if match["letter"] in seen:
            raise QuestionRefused(f"option letter {match['letter']} is given twice")
        seen.add(match["letter"])
