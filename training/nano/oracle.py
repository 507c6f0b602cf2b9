"""Oracle turns for the needle benchmark: what a perfect agent writes, from the ground truth.

:class:`OracleModel` speaks the chat-model contract, so the real graph runs it and the traces
come out in exactly the graph's format. It routes on the request's role and reads only what
the request shows (frame times, the window, the notes that came back) plus the ground truth
of the run, which :func:`bind` sets. The turns it writes:

- **main agent.** Every turn opens with what the question asks and how it will answer
  (``training.nano.intents.restatement``). The first turn says what the overview frames
  show, then answers (a named needle in view), reads a scanner's note (two-agent mode), or
  sends four parallel ``crop_video`` calls covering the video. After the notes it reasons
  from them (``training.nano.reasoning``) and answers in kind. When the verify gate
  withheld a note, it asks for those windows again once. When its answer is sent back as
  too short, it keeps it: a question about coloured shapes has a short complete answer.
  Without tools it answers from the overview (a guess when nothing is in view).
- **sub-agent.** Each needle its frames show, with the time of the first frame showing it
  and of the first frame after it, and the sighting again shape first
  (``Seen: red circle from 35 to 38 seconds; the circle is red.``), or
  ``No coloured shapes.``; with ``noise`` a share of them misread (``agents.misreads``).
- **verifier.** SUPPORTED when the note states what the frames show, UNSUPPORTED when it
  states something else, UNCERTAIN when it states no sighting it can check.

Why these formats: ``training.nano.reasoning`` and ``docs/nano.md``.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import random
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agents import benchmark, prompts
from agents.client.completion import Completion, Usage
from agents.media.sampling import window_timestamps
from agents.misreads import KINDS, misread, misreadable
from agents.protocol import TOOL_NAME, parse, render_turn
from agents.requests import ModelRequest
from agents.synthetic import QAItem, SyntheticVideo
from training.nano.intents import answer_mode, intent_of, restatement
from training.nano.reasoning import after_notes, num, restated_key, sightings

WINDOWS = 4
NO_SHAPES = "No coloured shapes."
SEEN = "Seen:"
_LABEL = re.compile(r"^<(\d+(?:\.\d+)?) seconds>$")
_WITHHELD = re.compile(r"No verified finding for (\d+(?:\.\d+)?) - (\d+(?:\.\d+)?) seconds")
_CLAIM = re.compile(r"^Note: (.*)$", re.M)
_RESPONSE = re.compile(r"<tool_response>\n(.*?)\n</tool_response>", re.S)


@dataclass(frozen=True)
class Truth:
    """The run's video and question, which only the oracle may read; `chat` when the
    question block is the chat's (``Question: ...``), not a benchmark prompt."""

    video: SyntheticVideo
    item: QAItem
    chat: bool = False
    misread: set = field(default_factory=set, hash=False)  # sub-agents whose note it misread


_TRUTH: contextvars.ContextVar[Truth] = contextvars.ContextVar("needle_truth")


def bind(video: SyntheticVideo, item: QAItem, *, chat: bool = False) -> Truth:
    """Make `video` and `item` the truth for the current task and the tasks it starts."""
    truth = Truth(video, item, chat)
    _TRUTH.set(truth)
    return truth


def _texts(message: Mapping) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [p["text"] for p in content or [] if p.get("type") == "text"]


def frame_times(message: Mapping) -> list[float]:
    """The times of the frames in one message, read from their ``<t seconds>`` labels."""
    return [float(m.group(1)) for t in _texts(message) if (m := _LABEL.match(t.strip()))]


def window_frame_times(start: float, end: float, duration: float) -> list[float]:
    """The times of the frames a sub-agent sees in [start, end), as the decoder returns them.

    >>> window_frame_times(0, 15, 60)[:5]
    [1.0, 2.0, 3.0, 4.0, 6.0]
    """
    targets = window_timestamps(
        start, end, fps=benchmark.FPS, max_frames=benchmark.GRAPH_SETTINGS["crop_max_frames"]
    )
    return [min(float(math.floor(t * benchmark.FPS + 0.5)), duration - 1) for t in targets]


def window_note(video: SyntheticVideo, times: Sequence[float], end: float) -> str:
    """The sub-agent's note on frames at `times` of a window ending at `end`.

    >>> from agents.synthetic import Needle
    >>> needle = Needle(20, 23, "red", "circle", "")
    >>> video = SyntheticVideo("v.mp4", 0, 60.0, 1.0, 128, 96, (needle,))
    >>> window_note(video, [15.0, 18.0, 21.0, 24.0, 27.0], 30.0)
    'Seen: red circle from 21 to 24 seconds; the circle is red.'
    """
    sentences = []
    for needle in video.needles:
        seen = [i for i, t in enumerate(times) if needle.start <= t < needle.end]
        if not seen:
            continue
        after = times[seen[-1] + 1] if seen[-1] + 1 < len(times) else end
        sentences.append(
            f"{SEEN} {needle.color} {needle.shape} from {num(times[seen[0]])} to "
            f"{num(after)} seconds; {restated_key(needle.shape)} {needle.color}."
        )
    return " ".join(sentences) or NO_SHAPES


def overview_sentence(video: SyntheticVideo, times: Sequence[float]) -> str:
    """What the overview frames show, in the main agent's words."""
    seen = [
        f"the {n.color} {n.shape} at {num(t)} seconds"
        for t in times
        for n in benchmark.visible_at(video.needles, t)
    ]
    if not seen:
        return "The overview frames show no coloured shape."
    return "The overview frames show " + " and ".join(seen) + "."


def _overview_spans(video: SyntheticVideo, times: Sequence[float]):
    return {
        (n.color, n.shape): (t, t + 1.0)
        for t in times
        for n in benchmark.visible_at(video.needles, t)
    }


def _int(x: float) -> int | float:
    return int(x) if float(x).is_integer() else round(x, 1)


def _calls(windows: Sequence[tuple[float, float]]) -> list[dict]:
    return [
        {"name": TOOL_NAME, "arguments": {"start_time": _int(a), "end_time": _int(b)}}
        for a, b in windows
    ]


def _guess(truth: Truth, mode: str) -> str:
    """The answer without evidence: the letter (a guess) with options, else an honest miss."""
    if mode == "letter":
        return truth.item.answer
    return "I could not find it in the video."


def answer_turn(truth: Truth, opening: str, spans, mode: str) -> str:
    """A turn that answers from `spans` (the needles the notes or the overview report)."""
    item, intent = truth.item, intent_of(truth.item)
    found = after_notes(intent, mode, item.options, spans)
    if found is None:
        return render_turn(f"{opening}\nThe notes do not show it.", answer=_guess(truth, mode))
    lines, answer = found
    if answer is None:  # no option fits what the notes show (a scan of part of the video)
        return render_turn(
            f"{opening}\n{lines}\nNo option fits the notes.", answer=_guess(truth, mode)
        )
    return render_turn(f"{opening}\n{lines}", answer=answer)


def reasoning(item: QAItem, spans, *, chat: bool = False):
    """(the lines after the restatement, the answer) the needles `spans` imply for `item`,
    or None when they cannot answer it (``training.nano.reasoning.after_notes``)."""
    return after_notes(intent_of(item), answer_mode(item, chat=chat), item.options, spans)


def look_again(opening: str, withheld: Sequence[tuple[float, float]]) -> str:
    """The turn that asks again for the windows whose notes the verify gate withheld."""
    lines = [f"No verified note on {num(a)} - {num(b)} seconds." for a, b in withheld]
    return render_turn(
        "\n".join([opening, *lines, "I will look again."]), tool_calls=_calls(withheld)
    )


def kept_answer(opening: str, answer: str) -> str:
    """The turn after the length gate sent a short answer back: the same answer."""
    return render_turn(f"{opening}\nThe answer is complete.", answer=answer)


def main_turn(truth: Truth, messages: Sequence[Mapping]) -> str:
    """The main agent's whole turn (starting with ``<think>``) for this request."""
    video, item = truth.video, truth.item
    intent, mode = intent_of(item), answer_mode(item, chat=truth.chat)
    opening = restatement(intent, mode)
    tools = "<tools>" in "".join(_texts(messages[0]))
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    turns = [m for m in messages if m["role"] == "assistant"]
    first_turn = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), None)
    board = [  # a scanner's note (or earlier notes): user messages before the first turn
        t for i in users[1:] if first_turn is None or i < first_turn for t in _texts(messages[i])
    ]
    if turns and (said := parse(_texts(turns[-1])[0]).answer):  # sent back as too short
        return kept_answer(opening, said)
    if not turns:
        look = overview_sentence(video, frame_times(messages[users[0]]))
        if board:
            return answer_turn(truth, f"{opening} {look}", sightings(board), mode)
        visible = _overview_spans(video, frame_times(messages[users[0]]))
        if intent.ask in ("colour", "shape") and intent.named:
            direct = after_notes(intent, mode, item.options, visible)
            if direct is not None and direct[1] is not None:
                return render_turn(f"{opening} {look}\n{direct[0]}", answer=direct[1])
        if intent.ask == "unknown" and not tools:
            return answer_turn(truth, f"{opening} {look}", visible, mode)
        if not tools:
            return render_turn(f"{opening} {look} I cannot see it.", answer=_guess(truth, mode))
        step = video.duration / WINDOWS
        windows = [(k * step, (k + 1) * step) for k in range(WINDOWS)]
        think = f"{opening} {look} I will search the video in {WINDOWS} windows."
        return render_turn(think, tool_calls=_calls(windows))
    replies = "".join(t for i in users if i > first_turn for t in _texts(messages[i]))
    latest = "".join(_texts(messages[users[-1]]))
    notes = _RESPONSE.findall(replies)
    withheld = [(float(a), float(b)) for a, b in _WITHHELD.findall(latest)]
    forced = prompts.forced_answer_text(item.kind) in latest
    if withheld and len(turns) == 1 and tools and not forced:
        return look_again(opening, withheld)
    return answer_turn(truth, opening, sightings(notes), mode)


def sub_turn(truth: Truth, messages: Sequence[Mapping], window: tuple[float, float]) -> str:
    """The sub-agent's note for this request (its window from the request, never its text)."""
    return window_note(truth.video, frame_times(messages[-1]), window[1])


def verdict(truth: Truth, messages: Sequence[Mapping], window: tuple[float, float]) -> str:
    """The verifier's word on the note this request quotes, against its frames."""
    claim = _CLAIM.search("\n".join(_texts(messages[-1])))
    note = claim.group(1).strip() if claim else ""
    # The request holds only the frames the note cites; the right note is the whole window's.
    right = window_note(truth.video, window_frame_times(*window, truth.video.duration), window[1])
    if note == right or (note == NO_SHAPES and right == NO_SHAPES):
        return "SUPPORTED"
    if not (misreadable(note) or note == NO_SHAPES):
        return "UNCERTAIN"
    return "SUPPORTED" if sightings([note]) == sightings([right]) else "UNSUPPORTED"


class OracleModel:
    """A chat model that writes the oracle's turns for the run bound with :func:`bind`; with
    `noise`, a share of its sub-agents' sighting notes come back misread (seeded)."""

    model = "needle-oracle"

    def __init__(self, *, noise: float = 0.0, seed: int = 0):
        self.noise, self.seed = noise, seed

    def _noisy(self, truth: Truth, request: ModelRequest, times, note: str) -> str:
        if not (self.noise and misreadable(note)):
            return note
        key = f"{self.seed}|{truth.video.seed}|{truth.item.id}|{request.agent}|{request.window}"
        rng = random.Random(key)
        if rng.random() >= self.noise:
            return note
        end = request.window[1]
        wrong, changed = misread(note, rng.choice(KINDS), rng, times=times, window_end=end)
        if changed:
            truth.misread.add(request.agent)
        return wrong

    async def complete(self, request: ModelRequest, *, on_text=None) -> Completion:
        began = time.perf_counter()
        truth = _TRUTH.get()
        messages = await asyncio.to_thread(request.wire)  # frames labelled with their real times
        if request.role == "sub_agent":
            note = sub_turn(truth, messages, request.window)
            text = self._noisy(truth, request, frame_times(messages[-1]), note)
        elif request.role == "verifier":
            text = verdict(truth, messages, request.window)
        else:
            text = main_turn(truth, messages)
            prefill = request.prefill
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
