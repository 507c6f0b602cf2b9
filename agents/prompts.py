"""Prompt text and message building for the main agent and its sub-agents.

Messages are OpenAI chat dicts. Frames travel inside them as *frame references*
(`{"type": "frames", "video": ..., "timestamps": [...], "max_pixels": ...}`) so that graph
state, checkpoints and traces stay small; `expand_frames` turns each reference into the
timestamp texts and JPEG data URLs a server reads, at request time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from agents.media import frame_store, video
from agents.protocol import TOOL_NAME

QuestionKind = Literal["multiple_choice", "grounding", "open_ended"]


def implied_kind(options: Sequence[str], kind: QuestionKind | None = None) -> QuestionKind:
    """`kind` where the source fixes it; else what the options imply: multiple choice with
    options, open-ended without (a question asked in chat, on the CLI, in a document).

    >>> implied_kind(["A. red", "B. blue"]), implied_kind([]), implied_kind([], "grounding")
    ('multiple_choice', 'open_ended', 'grounding')
    """
    return kind or ("multiple_choice" if options else "open_ended")


Dispatch = Literal["parallel", "sequential", "none"]

FRAMES_PART = "frames"
VIDEO_PART = "video"  # a whole video a server decodes itself: sent as a file:// video_url

CROP_VIDEO_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": (
            "Look closely at one time window of the video. A helper watches the window "
            "frame by frame and reports back what it shows."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "start_time": {"type": "number", "description": "Window start, in seconds."},
                "end_time": {"type": "number", "description": "Window end, in seconds."},
            },
            "required": ["start_time", "end_time"],
        },
    },
}

_ANSWER_FORMATS: dict[str, str] = {
    "multiple_choice": "Put only the letter of the correct option inside <answer></answer>.",
    "grounding": ("Inside <answer></answer>, write: The event happens in the START - END seconds."),
    "open_ended": "Put your complete answer inside <answer></answer>.",
}


ANSWER_TAG_INSTRUCTION = "Give your final answer inside <answer></answer>."


def frames_part(
    video_path: str,
    timestamps: Sequence[float],
    max_pixels: int,
    region: Sequence[float] | None = None,
    sampling: str = "exact",
) -> dict[str, Any]:
    """A reference to decoded frames, expanded into images only when a request is sent.
    `region` is a band of a still image's height (agents.media.stills).

    With `sampling="keyframe"` (a video only) each time is snapped to its nearest keyframe,
    read from the file's packets: `timestamps` are then the frames' real times, beside the
    `requested` ones and each frame's `errors` (real minus requested, seconds).
    """
    ref: dict[str, Any] = {
        "type": FRAMES_PART,
        "video": str(video_path),
        "timestamps": [round(float(t), 3) for t in timestamps],
        "max_pixels": int(max_pixels),
    }
    if region is not None:
        ref["region"] = [round(float(r), 4) for r in region]
    if sampling == "keyframe" and not video.is_still(video.probe(video_path)):
        real = [round(t, 3) for t in video.snap_to_keyframes(video_path, ref["timestamps"])]
        errors = [round(r - t, 3) for r, t in zip(real, ref["timestamps"], strict=True)]
        ref.update(sampling="keyframe", requested=ref["timestamps"], timestamps=real)
        ref["errors"] = errors
    return ref


def text_part(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


STILL_HINTS = {
    "pages": (
        "The input is a document: each page is shown after its number, and page k spans "
        "seconds k-1 to k of crop_video (crop_video(2, 5) looks at pages 3 to 5)."
    ),
    "image": (
        "The input is one image: crop_video's start_time and end_time are fractions of its "
        "height (0 = top, 1 = bottom), so crop_video(0.5, 1.0) looks closely at the bottom half."
    ),
}


def main_system_prompt(calls_per_turn: int, media: str = "video") -> str:
    """The main agent's system prompt; it describes the crop tool unless no call is served
    (``calls_per_turn`` 0: dispatch none), and how its windows map onto pages or image
    regions for still media."""
    base = (
        "You are a video analyst. You see frames sampled from a long video, each preceded "
        "by its absolute time, and answer a question about the video. Think step by step "
        "inside <think></think> before you act."
    )
    if calls_per_turn == 0:
        return f"{base} Then give your final answer inside <answer></answer>."
    calls = "one call" if calls_per_turn == 1 else f"up to {calls_per_turn} calls in parallel"
    return (
        f"{base}\n\nYou may inspect time windows with this tool:\n<tools>\n"
        f"{json.dumps(CROP_VIDEO_SCHEMA)}\n</tools>\n\n"
        f"To use it, write {calls} after your thinking, each as\n<tool_call>\n"
        f'{{"name": "{TOOL_NAME}", "arguments": {{"start_time": <seconds>, '
        f'"end_time": <seconds>}}}}\n</tool_call>\n'
        "Results come back inside <tool_response></tool_response>, one per call, in order. "
        "When you know the answer, give it inside <answer></answer> instead of calling tools."
        + (f"\n{STILL_HINTS[media]}" if media in STILL_HINTS else "")
    )


def question_text(
    question: str, options: Sequence[str] = (), kind: QuestionKind | None = None
) -> str:
    """The question block: question, options one per line, and the answer format."""
    kind = implied_kind(options, kind)
    lines = [f"Question: {question.strip()}"]
    lines += [option.strip() for option in options]
    lines.append(_ANSWER_FORMATS[kind])
    return "\n".join(lines)


def main_user_content(
    question: str,
    overview: Mapping[str, Any],
    *,
    options: Sequence[str] = (),
    kind: QuestionKind | None = None,
    duration: float | None = None,
    prompt: str | None = None,
) -> list[dict[str, Any]]:
    """The first user turn: overview frames, then the video length and the question.

    `prompt` replaces the question block with a benchmark's own wording; the answer-tag
    instruction is still appended, since the graph reads the answer from `<answer>`.
    """
    intro = "Overview frames of the video"
    if duration is not None:
        intro += f" (length {duration:.1f} seconds)"
    if prompt:
        block = f"{prompt.strip()}\n{ANSWER_TAG_INSTRUCTION}"
    else:
        block = question_text(question, options, kind)
    return [text_part(f"{intro}:"), dict(overview), text_part(block)]


def forced_answer_text(kind: QuestionKind | None) -> str:
    """The Answer Suffix: the last turn's instruction to stop calling tools and answer."""
    fmt = _ANSWER_FORMATS[kind or "open_ended"]
    return f"This is your last turn: do not call tools. Finish your thinking, then answer. {fmt}"


def subagent_messages(
    frames: Mapping[str, Any],
    *,
    start: float,
    end: float,
    question: str | None = None,
    board: Sequence[str] = (),
    media: str = "video",
) -> list[dict[str, Any]]:
    """A sub-agent's request: describe one window factually (question-aware if given one),
    after the earlier notes of the shared board, when it may read them."""
    if media == "pages":
        task = (
            f"These are pages {int(start) + 1} to {max(math.ceil(end), int(start) + 1)} of a "
            "document. Report factually what they show: titles, numbers, labels, chart values "
            "and text, with the page each comes from."
        )
    elif media == "image":
        task = (
            f"This is the band from {start:.0%} to {end:.0%} of an image's height, enlarged. "
            "Report factually what it shows: text, numbers, labels, legend entries and values."
        )
    else:
        task = (
            f"These frames come from the window {start:.1f} - {end:.1f} seconds of a video. "
            "Describe factually what happens, in order: objects, colours, shapes, any written "
            "words, people and actions, with the time at which each appears."
        )
    if question:
        task += f" Focus on what helps answer: {question.strip()}"
    if board:
        notes = "\n".join(f"- {note}" for note in board)
        task = (
            f"Notes other agents wrote about other windows:\n{notes}\n"
            "They may contain mistakes: report only what your own frames show.\n\n" + task
        )
    return [
        {"role": "system", "content": "You describe video clips accurately and concisely."},
        {"role": "user", "content": [dict(frames), text_part(task)]},
    ]


def expand_frames(
    messages: Iterable[Mapping[str, Any]], *, cached_only: bool = False
) -> list[dict[str, Any]] | None:
    """Replace frame references with `<t seconds>` texts and JPEG data-URL images; with
    ``cached_only``, None unless every frame set is in memory (then nothing is decoded)."""
    expanded = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            parts: list[dict[str, Any]] = []
            for part in content:
                if part.get("type") == VIDEO_PART:
                    url = {"url": f"file://{part['video']}"}
                    parts.append({"type": "video_url", "video_url": url})
                    continue
                if part.get("type") != FRAMES_PART:
                    parts.append(dict(part))
                    continue
                frame_parts = _frame_parts(part, cached_only)
                if frame_parts is None:
                    return None
                parts.extend(frame_parts)
            message = {**message, "content": parts}
        expanded.append(dict(message))
    return expanded


def _frame_parts(ref: Mapping[str, Any], cached_only: bool) -> list[dict[str, Any]] | None:
    frames = frame_store.ref_frames(ref, cached_only=cached_only)
    if frames is None:
        return None
    region = tuple(ref["region"]) if ref.get("region") else None
    info = video.probe(ref["video"])
    labels = ref.get("labels", ())  # absent: each frame's own label; None: no labels
    parts: list[dict[str, Any]] = []
    for position, frame in enumerate(frames):
        if labels:
            parts.append(text_part(video.timestamp_text(labels[position])))
        elif labels is not None:
            parts.append(text_part(video.frame_label(info, frame.timestamp, region)))
        parts.append({"type": "image_url", "image_url": {"url": frame_store.data_url(frame)}})
    return parts


def count_frames(messages: Iterable[Mapping[str, Any]]) -> int:
    """How many images a request encodes (every frame reference, every time it is sent)."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            total += sum(len(p["timestamps"]) for p in content if p.get("type") == FRAMES_PART)
    return total


def merge_text_parts(parts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Join adjacent text parts, so a text-only message is a single text part."""
    merged: list[dict[str, Any]] = []
    for part in parts:
        if part.get("type") == "text" and merged and merged[-1].get("type") == "text":
            merged[-1] = {"type": "text", "text": merged[-1]["text"] + part["text"]}
        else:
            merged.append(dict(part))
    return merged
