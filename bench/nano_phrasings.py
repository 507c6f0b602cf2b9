"""The held-out phrasing set: questions about needle videos as people type them, never trained on.

Written before paravt-nano was trained on varied wording, and kept out of its training: the
training grammar (``training/nano/phrasing.py``) never produces one of these templates
(``tests/bench/test_nano_phrasing.py`` checks it), and nothing under ``training/`` reads this file.
The videos are the needle benchmark's test split (seeds from 1,000,000), which no training
step reads either.

Each question has a kind (what it asks), the needle it names, if any, and options or none:

- ``colour``: the colour of the named shape, or the colours the video shows;
- ``shape``: the shape of the named colour, or the shapes the video shows;
- ``when``: when the named needle is visible;
- ``count``: how many coloured shapes appear;
- ``first``: which needle appears first (videos with two needles or more);
- ``describe``: what happens in the video;
- ``unanswerable``: something the video cannot show (no options): the honest answer says it
  can see only coloured shapes, and which.

Questions are asked as a chat or ``app.py run`` asks them (``Question: ...`` with the
options, if any); each template is a new wording (question or imperative, any casing, with
or without a question mark, extra words around it). Scoring (:func:`score`) reads the words:
with options the letter; without, the colours, shapes, times or count the answer names.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agents import benchmark
from agents.prompts import implied_kind
from agents.question import Question
from agents.scoring.intervals import iou, parse_interval
from agents.scoring.letters import extract_letter
from agents.synthetic import Needle, SyntheticVideo

KINDS = ("colour", "shape", "when", "count", "first", "describe", "unanswerable")
#: Held-out wordings per kind, for ``{colour}``, ``{shape}`` and ``{needle}`` (``blue
#: circle``). A template without a slot asks about the whole video.
TEMPLATES: dict[str, tuple[str, ...]] = {
    "colour": (
        "Which colour does the {shape} have?",
        "tell me the colour of the {shape}",
        "The {shape} in this clip: what colour is it?",
        "what color was that {shape}",
        "Name the colour of the {shape} you can see in the video.",
        "I'd like to know the colour of the {shape}, please.",
        "In which colour is the {shape} drawn?",
        "COLOUR OF THE {shape}?",
        "which colours show up in this clip",
    ),
    "shape": (
        "Which shape is {colour}?",
        "The {colour} object: which shape is it?",
        "what shape did the {colour} one have",
        "Name the shape that is {colour} in this video.",
        "Could you tell me the shape of the {colour} figure?",
        "WHICH OF THE SHAPES IS {colour}",
        "which shapes can you spot in this clip?",
    ),
    "when": (
        "At what time is the {needle} visible?",
        "tell me when the {needle} shows up",
        "The {needle}: when can it be seen?",
        "at which seconds does the {shape} appear",
        "Find the moment the {colour} shape is on screen.",
        "When exactly do we see the {needle} in this clip?",
        "During which seconds is the {needle} shown?",
        "WHEN IS THE {needle} ON SCREEN",
    ),
    "count": (
        "How many coloured objects show up in this clip?",
        "count the shapes in the video",
        "What is the number of coloured shapes you can see?",
        "how many different shapes are shown",
        "Tell me how many coloured figures appear.",
        "In total, how many shapes does the video contain?",
        "HOW MANY SHAPES ARE THERE",
    ),
    "first": (
        "Which shape shows up earliest?",
        "tell me the first shape you see in the video",
        "What is the earliest coloured shape in this clip?",
        "Name the shape that comes first.",
        "Out of all the shapes, which one is shown first?",
        "WHICH SHAPE IS SHOWN BEFORE THE OTHERS",
    ),
    "describe": (
        "what is going on in this clip",
        "Give me a summary of the video.",
        "Tell me what you see happening, in order.",
        "Walk me through the events of the video",
        "So what happens in this video?",
        "Can you summarise the clip for me?",
    ),
    "unanswerable": (
        "who is speaking?",
        "What language do they speak in the video?",
        "how loud is the music",
        "Which city was this filmed in?",
        "What is the man holding?",
        "what is the weather like in the clip",
    ),
}
#: Words around a question, as people add them (held out too).
OPENERS = ("", "", "", "Hi there! ", "One more thing - ", "Okay, ", "hmm, ")
CLOSERS = ("", "", "", " :)", " Please and thank you.", " - just curious")
#: Kinds asked with options as well as without (an unanswerable question has none).
WITH_OPTIONS = ("colour", "shape", "when", "count", "first", "describe")
#: Templates of `first` that ask for a colour or a shape (their options are colours or
#: shapes); the others ask for the needle.
_ASKS_SHAPE = re.compile(r"\bshapes?\b", re.IGNORECASE)


@dataclass(frozen=True)
class Phrased:
    """One held-out question: the video, the wording, its options and its right answer."""

    id: str
    video: str
    kind: str
    question: str
    options: tuple[str, ...] = ()
    letter: str | None = None  # the right option, with options
    needles: tuple[Needle, ...] = ()  # the video's needles, in time order
    named: dict = field(default_factory=dict)  # {"colour": ..., "shape": ...} it names
    duration: float = 0.0

    @property
    def ask(self) -> Question:
        """The question as a chat asks it (its kind, colour or count, is this set's own)."""
        return Question(self.question, self.options, implied_kind(self.options))


def _needle_text(n: Needle) -> str:
    return f"{n.color} {n.shape}"


def _sequence(needles: Sequence[Needle]) -> str:
    return ", then ".join(f"a {_needle_text(n)}" for n in needles)


def _options(rng: random.Random, right: str, wrong: Sequence[str]) -> tuple[tuple[str, ...], str]:
    choices = [right, *rng.sample(list(wrong), 3)]
    rng.shuffle(choices)
    letter = benchmark.LETTERS[choices.index(right)]
    return tuple(f"{benchmark.LETTERS[k]}. {c}" for k, c in enumerate(choices)), letter


def _span_text(a: float, b: float) -> str:
    return f"{a:g} to {b:g} seconds"


def _wrong_spans(video: SyntheticVideo, target: Needle, rng: random.Random) -> list[str]:
    """Three spans as long as the target's, each at least an eighth of the video away from
    it and from each other."""
    length, gap = target.end - target.start, video.duration / 8
    starts = list(range(0, int(video.duration - length)))
    rng.shuffle(starts)
    taken = [target.start]
    for s in starts:
        if all(s + length <= t - gap or s >= t + length + gap for t in taken):
            taken.append(s)
    if len(taken) < 4:
        raise ValueError(f"no room for three wrong spans in {video.path}")
    return [_span_text(s, s + length) for s in taken[1:4]]


def _wrong_sequences(needles: Sequence[Needle], rng: random.Random) -> list[str]:
    out = set()
    if len(needles) > 1:
        out.add(_sequence(list(reversed(needles))))
        out.add(_sequence(needles[:-1]))
    while len(out) < 4:
        k = rng.randrange(len(needles))
        colour = rng.choice([c for c in benchmark.COLOURS if c != needles[k].color])
        shape = rng.choice([s for s in benchmark.SHAPES if s != needles[k].shape])
        changed = Needle(needles[k].start, needles[k].end, colour, shape, "")
        out.add(_sequence([*needles[:k], changed, *needles[k + 1 :]]))
    return sorted(out - {_sequence(needles)})


def _fill(template: str, needle: Needle) -> str:
    text = template.format(colour=needle.color, shape=needle.shape, needle=_needle_text(needle))
    return text.upper() if template.isupper() or template.split("{")[0].isupper() else text


def _others(values: Sequence[str], right: str) -> list[str]:
    return [v for v in values if v != right]


def _choices(
    kind: str, template: str, video: SyntheticVideo, target: Needle, rng: random.Random
) -> tuple[tuple[str, ...], str]:
    """Four options for a question of `kind` about `target`, and the right one's letter."""
    needles = tuple(sorted(video.needles, key=lambda n: n.start))
    if kind == "colour":
        return _options(rng, target.color, _others(benchmark.COLOURS, target.color))
    if kind == "shape":
        return _options(rng, target.shape, _others(benchmark.SHAPES, target.shape))
    if kind == "when":
        right = _span_text(target.start, target.end)
        return _options(rng, right, _wrong_spans(video, target, rng))
    if kind == "count":
        letters = benchmark.LETTERS
        return tuple(f"{letters[k]}. {k + 1}" for k in range(4)), letters[len(needles) - 1]
    if kind == "first":
        first = needles[0]
        if _ASKS_SHAPE.search(template):
            return _options(rng, first.shape, _others(benchmark.SHAPES, first.shape))
        return _options(rng, first.color, _others(benchmark.COLOURS, first.color))
    if kind == "describe":
        return _options(rng, _sequence(needles), _wrong_sequences(needles, rng))
    raise ValueError(f"a {kind} question has no options")


def phrase(
    video: SyntheticVideo, kind: str, template: str, options: bool, rng: random.Random, ident: str
) -> Phrased:
    """The question of `template` about `video`, with four options or none."""
    needles = tuple(sorted(video.needles, key=lambda n: n.start))
    target = rng.choice(needles)
    named = {
        "colour": target.color if "{colour}" in template or "{needle}" in template else None,
        "shape": target.shape if "{shape}" in template or "{needle}" in template else None,
    }
    question = rng.choice(OPENERS) + _fill(template, target) + rng.choice(CLOSERS)
    if options and kind in ("colour", "shape") and not (named["colour"] or named["shape"]):
        raise ValueError(f"template {template!r} names no needle, so it has no options")
    opts, letter = _choices(kind, template, video, target, rng) if options else ((), None)
    return Phrased(ident, video.path, kind, question, opts, letter, needles, named, video.duration)


def _askable(kind: str, template: str, options: bool) -> bool:
    """Whether `template` is asked with (or without) options: a colour or shape question
    about the whole video has none."""
    return not options or "{" in template or kind not in ("colour", "shape")


def held_out(videos: Sequence[SyntheticVideo], per_cell: int = 16, seed: int = 40) -> list[Phrased]:
    """`per_cell` questions per kind, with options and without (unanswerable: without only),
    over the test-split `videos`; the same arguments, the same set."""
    rng = random.Random(seed)
    items = []
    for kind in KINDS:
        for options in (False, True) if kind in WITH_OPTIONS else (False,):
            templates = [t for t in TEMPLATES[kind] if _askable(kind, t, options)]
            pool = [v for v in videos if kind != "first" or len(v.needles) > 1]
            for k in range(per_cell):
                template = templates[k % len(templates)]
                video = rng.choice(pool)
                ident = f"{kind}-{'options' if options else 'words'}-{k:02d}"
                items.append(phrase(video, kind, template, options, rng, ident))
    return items


_PAIR = re.compile(rf"\b({'|'.join(benchmark.COLOURS)}) ({'|'.join(benchmark.SHAPES)})\b")
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "1": 1, "2": 2, "3": 3, "4": 4}
_LETTER = re.compile(r"^\s*\(?[A-D](?:\)|[.:]|\s*$)")  # "D", "(D)", "D. blue"; not "A red..."
HONEST = "only see coloured shapes"


def _mentioned(text: str, vocabulary: Sequence[str]) -> set[str]:
    return {w for w in vocabulary if re.search(rf"\b{w}\b", text)}


def score(item: Phrased, answer: str | None) -> dict:
    """{"score": 0..1, "letter_leak": whether a bare letter came back without options, ...}
    for `answer` (the text inside <answer>) to `item`."""
    text = (answer or "").strip()
    low = text.lower()
    leak = not item.options and bool(_LETTER.match(text))
    if item.options:
        found = extract_letter(text, "robust", letters=benchmark.LETTERS)
        return {"score": float(found == item.letter), "letter_leak": False}
    needles = item.needles
    colour, shape = item.named.get("colour"), item.named.get("shape")
    target = next(
        (n for n in needles if colour in (None, n.color) and shape in (None, n.shape)), needles[0]
    )
    colours, shapes = _mentioned(low, benchmark.COLOURS), _mentioned(low, benchmark.SHAPES)
    pairs = [tuple(p) for p in _PAIR.findall(low)]
    truth = [(n.color, n.shape) for n in needles]
    named = colour or shape
    if item.kind == "colour":
        ok = colours == ({target.color} if named else {c for c, _ in truth})
    elif item.kind == "shape":
        ok = shapes == ({target.shape} if named else {s for _, s in truth})
    elif item.kind == "when":
        span = parse_interval(low)
        return {
            "score": iou(span, (target.start, target.end)) if span else 0.0,
            "letter_leak": leak,
        }
    elif item.kind == "count":
        said = next(
            (_NUMBER_WORDS[w] for w in re.findall(r"\b\w+\b", low) if w in _NUMBER_WORDS), None
        )
        ok = said == len(needles)
    elif item.kind == "first":
        ok = colours == {needles[0].color} and shapes == {needles[0].shape}
    elif item.kind == "describe":
        ok = pairs == truth
    else:
        ok = HONEST in low and pairs == truth
        return {"score": float(ok), "letter_leak": leak, "honest": HONEST in low}
    return {"score": float(ok and not leak), "letter_leak": leak}


def table(items: Sequence[Phrased], scores: Sequence[dict]) -> dict:
    """Mean score per kind, with options and without, and how often a letter came back
    without options."""
    cells: dict[str, dict[str, list[float]]] = {}
    for item, s in zip(items, scores, strict=True):
        cell = cells.setdefault(item.kind, {})
        cell.setdefault("options" if item.options else "words", []).append(s["score"])
    words = [s for i, s in zip(items, scores, strict=True) if not i.options]
    return {
        "by_kind": {
            kind: {k: {"n": len(v), "score": round(sum(v) / len(v), 4)} for k, v in cell.items()}
            for kind, cell in cells.items()
        },
        "letter_without_options": round(
            sum(s["letter_leak"] for s in words) / max(1, len(words)), 4
        ),
        "questions": len(items),
    }
