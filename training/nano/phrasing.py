"""Questions as people type them, for paravt-nano's training: varied wordings of every intent.

A question is drawn as an intent (``training.nano.intents``), a wording of it (a template
below, a question or an imperative), words around it, a casing (as written, lower case,
upper case), with or without its closing mark, and with four options or none. The held-out
phrasing set (``bench/nano_phrasings.py``) was written before this grammar and is never
produced by it (``tests/bench/test_nano_phrasing.py``); nothing here reads it.

Slots: ``{shape}``, ``{colour}``, ``{needle}`` (``blue circle``), ``{one}`` (a needle named
by its colour: ``blue one``, ``blue shape``, ``blue object``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from agents import benchmark
from agents.synthetic import Needle, QAItem, SyntheticVideo
from training.nano.intents import Intent

TEMPLATES: dict[str, tuple[str, ...]] = {
    "colour": (
        "What colour is the {shape}?",
        "What color is the {shape}?",
        "What colour is the {shape} that appears in the video?",
        "Which colour is the {shape}?",
        "What is the colour of the {shape}?",
        "Tell me the {shape}'s colour.",
        "Say what colour the {shape} is.",
        "The {shape} is which colour?",
        "Give the colour of the {shape} in the video.",
        "In the video, what colour is the {shape}?",
        "Can you tell what colour the {shape} is?",
        "What is the {shape}'s color?",
        "Identify the colour of the {shape}.",
        "What colour is the {shape} shown in this video?",
        "Which hue is the {shape}?",
        "Do you know the colour of the {shape}?",
        "Is the {shape} red, green, blue or yellow?",
    ),
    "colours": (
        "What colours appear in the video?",
        "Which colours are shown?",
        "What colour is the shape in the video?",
        "List the colours you see.",
        "Which colours does the video show?",
    ),
    "shape": (
        "What shape is the {colour} object that appears in the video?",
        "What shape is the {colour} object?",
        "Which shape is the {one}?",
        "What is the shape of the {one}?",
        "What shape does the {colour} thing have?",
        "Tell me the shape of the {one}.",
        "The {one} is which shape?",
        "shape of the {one}",
        "Identify the shape that is {colour}.",
        "What kind of shape is {colour}?",
        "Say which shape the {colour} figure is.",
        "What form does the {colour} shape take?",
        "Which {colour} shape do you see?",
        "Give the shape of the {one} in the video.",
    ),
    "shapes": (
        "What shape appears in the video?",
        "What shapes are in the video?",
        "Which shapes do you see?",
        "List the shapes in the video.",
        "What kind of shapes does the video show?",
    ),
    "when": (
        "When does the {needle} appear? Give start and end in seconds.",
        "When does the {needle} appear?",
        "When is the {needle} shown?",
        "At what time does the {needle} appear?",
        "When can you see the {needle}?",
        "Give the time span of the {needle}.",
        "From when to when is the {needle} visible?",
        "Between which times is the {needle} visible?",
        "Time of the {needle}?",
        "Locate the {needle} in time.",
        "Where in the video is the {needle}?",
        "What seconds does the {needle} cover?",
        "Show me when the {needle} appears.",
        "When does the {shape} appear?",
        "When is the {one} shown?",
    ),
    "count": (
        "How many coloured shapes appear in the video?",
        "How many shapes do you see?",
        "What number of shapes appears?",
        "How many objects appear in the video?",
        "Number of coloured shapes in the video?",
        "How many coloured things are shown?",
        "Give the count of shapes.",
        "How many different colours appear?",
        "Give me the number of coloured shapes.",
        "How many needles does the video have?",
    ),
    "first": (
        "Which colour is the shape that appears first in the video?",
        "Which shape appears first?",
        "What is the first shape?",
        "What comes first in the video?",
        "Which shape is shown first?",
        "Which one comes first?",
        "What appears first?",
        "Which colour appears first?",
        "Which shape do you see first?",
        "What is the first thing that appears?",
    ),
    "last": (
        "What are the colour and the shape of the last coloured shape in the video?",
        "Which shape appears last?",
        "What is the last shape?",
        "What comes last in the video?",
        "What is the final shape?",
        "Which colour appears last?",
        "What is the last thing that appears?",
        "Which one is shown last?",
    ),
    "describe": (
        "Describe what happens in the video.",
        "Describe the video.",
        "Summarize the video.",
        "What does the video show?",
        "What do you see in the video?",
        "Tell me about the video.",
        "Explain what the video shows.",
        "What is in this video?",
        "Give a description of the video.",
        "Describe the events in order.",
    ),
    "unknown": (
        "Who is talking?",
        "What is the person saying?",
        "What music is playing?",
        "What is written on the sign?",
        "Is it raining?",
        "What is the name of the dog?",
        "How old is the woman?",
        "What brand is the car?",
        "Why is the man laughing?",
        "Where was the video recorded?",
        "What time of day is it?",
        "What does the text say?",
        "Who is in the video?",
        "What song is this?",
    ),
}
#: Template groups -> the intent they ask (the plural groups ask about every needle).
ASKS = {"colours": "colour", "shapes": "shape"}
PREFIXES = (
    "",
    "",
    "",
    "",
    "Hey, ",
    "Quick question: ",
    "Please, ",
    "I wonder: ",
    "So, ",
    "Look at the video. ",
    "In this video, ",
    "Hello! ",
)
INSERTS = ("", "", "", "", " in the video", " please", " if you can", " here")  # before ?/.
SUFFIXES = ("", "", "", "", " Thanks!", " Thank you.", " Answer briefly.", " Be precise.")
#: Groups that take options, and how often a question of theirs has them.
OPTION_GROUPS = ("colour", "shape", "when", "count", "first", "last", "describe")


def _one(rng: random.Random, colour: str) -> str:
    return f"{colour} {rng.choice(('one', 'shape', 'object'))}"


def decorate(text: str, rng: random.Random) -> str:
    """Words around the question, its casing and its closing mark, drawn at random."""
    stem = text.rstrip("?.!")
    text = rng.choice(PREFIXES) + stem + rng.choice(INSERTS) + text[len(stem) :]
    text += rng.choice(SUFFIXES)
    draw = rng.random()
    if draw < 0.2:
        text = text.lower()
    elif draw < 0.3:
        text = text.upper()
    if rng.random() < 0.3:
        text = text.rstrip("?.!")
    return text


def _letters(rng: random.Random, right: str, wrong: Sequence[str]):
    choices = [right, *rng.sample(list(wrong), 3)]
    rng.shuffle(choices)
    options = tuple(f"{benchmark.LETTERS[k]}. {c}" for k, c in enumerate(choices))
    return options, benchmark.LETTERS[choices.index(right)]


def _sequence(needles: Sequence[Needle]) -> str:
    return ", then ".join(f"a {n.color} {n.shape}" for n in needles)


def _span(a: float, b: float) -> str:
    return f"{a:g} to {b:g} seconds"


def _other_spans(video: SyntheticVideo, needle: Needle, rng: random.Random) -> list[str]:
    """Spans as long as the needle's, an eighth of the video or more from it and each other
    (a sixteenth where that leaves no room for three)."""
    length = needle.end - needle.start
    starts = list(range(int(video.duration - length)))
    rng.shuffle(starts)
    for gap in (video.duration / 8, video.duration / 16, 0.0):
        taken = [needle.start]
        for s in starts:
            if all(s + length <= t - gap or s >= t + length + gap for t in taken):
                taken.append(s)
            if len(taken) == 4:
                return [_span(s, s + length) for s in taken[1:]]
    raise ValueError(f"no room for three other spans in {video.path}")


def _other_sequences(needles: Sequence[Needle], rng: random.Random) -> list[str]:
    out = {_sequence(needles[::-1]), _sequence(needles[1:])} if len(needles) > 1 else set()
    while len(out - {_sequence(needles)}) < 3:
        k = rng.randrange(len(needles))
        old = needles[k]
        colour = rng.choice([c for c in benchmark.COLOURS if c != old.color])
        shape = rng.choice([s for s in benchmark.SHAPES if s != old.shape])
        swap = Needle(old.start, old.end, colour, shape, "")
        out.add(_sequence([*needles[:k], swap, *needles[k + 1 :]]))
    return sorted(out - {_sequence(needles)})


def options_for(ask: str, template: str, video: SyntheticVideo, target: Needle, rng: random.Random):
    """Four options for a question asking `ask` about `target`, and the right letter."""
    needles = video.needles
    colours, shapes = benchmark.COLOURS, benchmark.SHAPES
    if ask == "colour":
        return _letters(rng, target.color, [c for c in colours if c != target.color])
    if ask == "shape":
        return _letters(rng, target.shape, [s for s in shapes if s != target.shape])
    if ask == "when":
        return _letters(rng, _span(target.start, target.end), _other_spans(video, target, rng))
    if ask == "count":
        return tuple(f"{benchmark.LETTERS[k]}. {k + 1}" for k in range(4)), "ABCD"[len(needles) - 1]
    if ask in ("first", "last"):
        n = needles[0] if ask == "first" else needles[-1]
        kind = rng.choice(("colour", "shape", "needle"))
        if "colour" in template or "color" in template:
            kind = "colour"
        elif "shape" in template:
            kind = rng.choice(("shape", "needle"))
        if kind == "colour":
            return _letters(rng, n.color, [c for c in colours if c != n.color])
        if kind == "shape":
            return _letters(rng, n.shape, [s for s in shapes if s != n.shape])
        others = [f"{c} {s}" for c in colours for s in shapes if (c, s) != (n.color, n.shape)]
        return _letters(rng, f"{n.color} {n.shape}", others)
    return _letters(rng, _sequence(needles), _other_sequences(needles, rng))


def phrased(
    video: SyntheticVideo,
    rng: random.Random,
    index: int,
    *,
    group: str | None = None,
    options: bool | None = None,
    template: str | None = None,
) -> QAItem:
    """One question about `video` in a drawn wording (or `template`, a wording of `group`):
    its item carries the intent (and the right letter, with options) in ``target``."""
    group = group or rng.choice(list(TEMPLATES))
    ask = ASKS.get(group, group)
    target = rng.choice(video.needles)
    template = template or rng.choice(TEMPLATES[group])
    question = decorate(
        template.format(
            shape=target.shape,
            colour=target.color,
            needle=f"{target.color} {target.shape}",
            one=_one(rng, target.color),
        ),
        rng,
    )
    named_colour = any(f"{{{k}}}" in template for k in ("colour", "needle", "one"))
    named_shape = any(f"{{{k}}}" in template for k in ("shape", "needle"))
    intent = Intent(
        ask, target.color if named_colour else None, target.shape if named_shape else None
    )
    if options is None:
        options = group in OPTION_GROUPS and rng.random() < 0.4
    opts, letter = options_for(ask, template, video, target, rng) if options else ((), None)
    kind = (
        "multiple_choice"
        if opts
        else ("grounding" if ask == "when" and rng.random() < 0.2 else "open_ended")
    )
    stem = Path(video.path).stem
    return QAItem(
        f"{stem}-p{index}-{ask}",
        kind,
        question,
        opts,
        letter or "",
        {"intent": intent.to_json(), "letter": letter},
    )
