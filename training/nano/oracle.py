"""Oracle turns for the needle benchmark: what a perfect agent writes, from the ground truth.

:class:`OracleModel` speaks the chat-model contract, so the real graph runs it and the traces
come out in exactly the graph's format. It reads only what the request shows (frame times,
the window, the notes that came back) plus the ground truth of the video being run, which
:func:`bind` sets per run. The turns it writes:

- main agent, first turn: what the overview frames show, then either the answer (when a
  needle the question names is in view) or four parallel ``crop_video`` calls covering the
  video;
- sub-agent: each needle its frames show, with the time of the first frame showing it and of
  the first frame after it, and the sighting again shape first
  (``Seen: red circle from 35 to 38 seconds; the circle is red.``), or
  ``No coloured shapes.``;
- main agent, after the notes: for a question that names a needle (its colour, its shape,
  when it appears), a check of the notes' needles by position, the last, then the first,
  then each other one, each line held against the needle the question names, down to the
  one that is it (``The last is the blue circle; the square? no.`` ``The first is the red
  square; the square? yes.``); then the fact it asks about (``So the square is red.``),
  and for a choice among values a scan of the options down to the one that holds it
  (``A. green, red: no`` ... ``D. red, red: yes``); then the answer;
- without tools: what the overview shows, then the answer (a guess when nothing is in view).

Why these formats. paravt-nano does not learn a keyed lookup: finding the note whose key the
question names and copying the value after it stayed at chance among two or three notes
through every trial (``docs/nano.md``), while the picks that need no key, the first needle
the notes report and the last, were right every time. So the main agent never looks a note
up by its key: it reads the last needle, then the first, then the others, and compares each
with the question's needle on its own line, where the two sit side by side; whatever it
needs next (the colour, the shape, the span) it copies from the ``yes`` line just above. In
text-only trials this took colour and shape lookups among several notes from about half right
to all right (``bench/nano_lookup_ablation_picks.json``). A sighting still reads ``Seen: blue
circle from 93 to 99 seconds; the circle is blue.``: the sub-agent writes each fact in both
orders, so the value it writes follows what it has just written. The option scan turns
"which letter holds this value" into steps that are each a copy or a comparison of
neighbouring tokens: each line opens with the option's opener (``"\nA."``, one token of the
nano tokenizer), copies the value from the line above, and compares the two; the letter of
the ``yes`` line is the answer. A letter found by matching the value against the options
stayed at chance after a thousand steps in trials; the scan was learning by then.
"""

from __future__ import annotations

import asyncio
import contextvars
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agents import benchmark
from agents.client.completion import Completion, Usage
from agents.protocol import TOOL_NAME, render_turn
from agents.requests import ModelRequest
from agents.synthetic import QAItem, SyntheticVideo

WINDOWS = 4
NO_SHAPES = "No coloured shapes."
_LABEL = re.compile(r"^<(\d+(?:\.\d+)?) seconds>$")
_SIGHTING = re.compile(r"(\w+) (\w+) from (\d+) to (\d+) seconds")
SEEN = "Seen:"


@dataclass(frozen=True)
class Truth:
    """The run's video and question, which only the oracle may read."""

    video: SyntheticVideo
    item: QAItem


_TRUTH: contextvars.ContextVar[Truth] = contextvars.ContextVar("needle_truth")


def bind(video: SyntheticVideo, item: QAItem) -> None:
    """Make `video` and `item` the truth for the current task and the tasks it starts."""
    _TRUTH.set(Truth(video, item))


def _num(x: float) -> str:
    return f"{x:g}"


def _texts(message: Mapping) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [p["text"] for p in content or [] if p.get("type") == "text"]


def frame_times(message: Mapping) -> list[float]:
    """The times of the frames in one message, read from their ``<t seconds>`` labels."""
    return [float(m.group(1)) for t in _texts(message) if (m := _LABEL.match(t.strip()))]


def window_note(video: SyntheticVideo, times: Sequence[float], end: float) -> str:
    """The sub-agent's note on frames at `times` of a window ending at `end`."""
    sentences = []
    for needle in video.needles:
        seen = [i for i, t in enumerate(times) if needle.start <= t < needle.end]
        if not seen:
            continue
        after = times[seen[-1] + 1] if seen[-1] + 1 < len(times) else end
        sentences.append(
            f"{SEEN} {needle.color} {needle.shape} from {_num(times[seen[0]])} to "
            f"{_num(after)} seconds; {_restated(needle.color, needle.shape)}."
        )
    return " ".join(sentences) or NO_SHAPES


def restated_key(shape: str) -> str:
    """The key a colour is looked up by: "the circle is" (one token of the nano tokenizer)."""
    return f"the {shape} is"


def _restated(colour: str, shape: str) -> str:
    """The sighting again with the shape first: "the circle is blue" (see the module doc)."""
    return f"{restated_key(shape)} {colour}"


def overview_sentence(video: SyntheticVideo, times: Sequence[float]) -> str:
    """What the overview frames show, in the main agent's words."""
    seen = [
        f"the {n.color} {n.shape} at {_num(t)} seconds"
        for t in times
        for n in benchmark.visible_at(video.needles, t)
    ]
    if not seen:
        return "The overview frames show no coloured shape."
    return "The overview frames show " + " and ".join(seen) + "."


def sightings(notes: Sequence[str]) -> dict[tuple[str, str], tuple[float, float]]:
    """(colour, shape) -> the span the notes report, merged across windows, in time order."""
    spans: dict[tuple[str, str], tuple[float, float]] = {}
    for note in notes:
        for colour, shape, a, b in _SIGHTING.findall(note):
            lo, hi = spans.get((colour, shape), (float(a), float(b)))
            spans[(colour, shape)] = (min(lo, float(a)), max(hi, float(b)))
    return dict(sorted(spans.items(), key=lambda kv: kv[1][0]))


def scan(item: QAItem, value: str) -> tuple[str, str | None]:
    """The options one by one down to the one that is `value`, each line comparing the
    option with `value` right beside it: (lines, the letter).

    >>> item = QAItem("v-mc-colour", "multiple_choice", "?", ("A. red", "B. blue"), "B", {})
    >>> print(scan(item, "blue")[0])
    A. red, blue: no
    B. blue, blue: yes
    """
    lines = []
    for option in item.options:
        letter, text = option.split(". ", 1)
        if text == value:
            return "\n".join([*lines, f"{letter}. {text}, {value}: yes"]), letter
        lines.append(f"{letter}. {text}, {value}: no")
    return "\n".join(lines), None


#: Question kinds that name one needle (by its shape, its colour, or both) and ask about it.
LOOKUP_KINDS = ("colour", "shape", "ground")


def _named(kind: str, question: str) -> tuple[str | None, str | None]:
    """(colour, shape) the question names for a lookup of `kind` (None for the unnamed one)."""
    words = question.rstrip("?").split()
    colour = next((w for w in words if w in benchmark.COLOURS), None)
    shape = next((w for w in words if w in benchmark.SHAPES), None)
    return (None if kind == "colour" else colour), (None if kind == "shape" else shape)


def _target_words(colour: str | None, shape: str | None) -> str:
    """How a check line names the question's needle: "the circle", "the red one"."""
    if colour and shape:
        return f"the {colour} {shape}"
    return f"the {colour} one" if colour else f"the {shape}"


def pick_lines(kind: str, question: str, spans) -> tuple[str, tuple] | None:
    """The check of the notes' needles for a lookup: the last, then the first, then each other
    one, each held against the needle the question names, down to the one that is it:
    (lines, ((colour, shape), (start, end))) or None when no needle is it.

    >>> spans = {("red", "square"): (3.0, 5.0), ("blue", "circle"): (40.0, 42.0)}
    >>> print(pick_lines("colour", "What colour is the square?", spans)[0])
    The last is the blue circle; the square? no.
    The first is the red square; the square? yes.
    """
    colour, shape = _named(kind, question)
    needles = list(spans.items())
    order = [len(needles) - 1, *range(len(needles) - 1)]
    target, lines = _target_words(colour, shape), []
    for position, index in enumerate(order):
        (c, s), (a, b) = needles[index]
        label = "last" if position == 0 else "first" if index == 0 else "other"
        span = f" from {_num(a)} to {_num(b)} seconds" if kind == "ground" else ""
        hit = (colour is None or c == colour) and (shape is None or s == shape)
        lines.append(f"The {label} is the {c} {s}{span}; {target}? {'yes' if hit else 'no'}.")
        if hit:
            return "\n".join(lines), needles[index]
    return None


def reasoning(item: QAItem, spans: Mapping[tuple[str, str], tuple[float, float]]):
    """(reasoning, answer) for `item` from the sightings, or None when they cannot answer it."""
    kind = item.id.rsplit("-", 1)[-1]
    if kind in LOOKUP_KINDS:
        picked = pick_lines(kind, item.question, spans) if spans else None
        if picked is None:
            return None
        lines, ((colour, shape), (a, b)) = picked
        if kind == "colour":
            options, letter = scan(item, colour)
            return f"{lines}\nSo {_restated(colour, shape)}.\n{options}", letter
        if kind == "shape":
            options, letter = scan(item, shape)
            return f"{lines}\n{SEEN} {colour} {shape}.\n{options}", letter
        return lines, f"The event happens in the {_num(a)} - {_num(b)} seconds."
    if not spans:
        return None
    first, last = next(iter(spans)), list(spans)[-1]
    if kind == "count":
        lines, letter = scan(item, str(len(spans)))
        return f"I count {len(spans)} coloured shapes.\n{lines}", letter
    if kind == "order":
        lines, letter = scan(item, first[0])
        return f"The first shape is {first[0]}.\n{lines}", letter
    if kind == "open":
        return f"The last shape is the {last[0]} {last[1]}.", f"the {last[0]} {last[1]}"
    return None


def _overview_spans(video: SyntheticVideo, times: Sequence[float]):
    return {
        (n.color, n.shape): (t, t + 1.0)
        for t in times
        for n in benchmark.visible_at(video.needles, t)
    }


def main_turn(truth: Truth, messages: Sequence[Mapping]) -> str:
    """The main agent's whole turn (starting with ``<think>``) for this request."""
    video, item = truth.video, truth.item
    tools = "<tools>" in "".join(_texts(messages[0]))
    first_user = next(m for m in messages if m["role"] == "user")
    overview = frame_times(first_user)
    responses = [
        t for m in messages if m["role"] == "user" and m is not first_user for t in _texts(m)
    ]
    notes = re.findall(r"<tool_response>\n(.*?)\n</tool_response>", "".join(responses), re.S)
    kind = item.id.rsplit("-", 1)[-1]
    if notes:
        found = reasoning(item, sightings(notes))
        think, answer = found or ("The notes do not show it, so I guess.", item.answer)
        return render_turn(think, answer=answer)
    look = overview_sentence(video, overview)
    direct = (
        reasoning(item, _overview_spans(video, overview)) if kind in ("colour", "shape") else None
    )
    if direct is not None:
        return render_turn(f"{look} {direct[0]}", answer=direct[1])
    if not tools:
        guess = item.answer if kind != "ground" else _guess_span(item)
        return render_turn(f"{look} I cannot see it, so I guess.", answer=guess)
    step = truth.video.duration / WINDOWS
    calls = [
        {
            "name": TOOL_NAME,
            "arguments": {"start_time": _int(i * step), "end_time": _int((i + 1) * step)},
        }
        for i in range(WINDOWS)
    ]
    return render_turn(f"{look} I will search the video in {WINDOWS} windows.", tool_calls=calls)


def _guess_span(item: QAItem) -> str:
    start, end = _num(item.target["start"]), _num(item.target["end"])
    return f"The event happens in the {start} - {end} seconds."


def _int(x: float) -> int | float:
    return int(x) if float(x).is_integer() else round(x, 1)


def sub_turn(truth: Truth, messages: Sequence[Mapping], window: tuple[float, float]) -> str:
    """The sub-agent's note for this request (its window from the request, never its text)."""
    return window_note(truth.video, frame_times(messages[-1]), window[1])


class OracleModel:
    """A chat model that writes the oracle's turns for the run bound with :func:`bind`."""

    model = "needle-oracle"

    async def complete(self, request: ModelRequest, *, on_text=None) -> Completion:
        began = time.perf_counter()
        truth = _TRUTH.get()
        messages = await asyncio.to_thread(request.wire)  # frames labelled with their real times
        prefill = request.prefill
        if request.role == "sub_agent":
            text = sub_turn(truth, messages, request.window)
        else:
            text = main_turn(truth, messages)
            if prefill:
                if not text.startswith(prefill):
                    raise ValueError(f"oracle turn does not start with the prefill {prefill!r}")
                text = text[len(prefill) :]
        return Completion(
            text=text,
            finish_reason="stop",
            usage=Usage(),
            latency_s=time.perf_counter() - began,
            model=self.model,
            attempts=1,
        )
