"""The main agent's reasoning from the needles its notes report, for every intent and answer mode.

Each step is a pick by position, a copy from the line above, or a comparison of neighbouring
tokens; none looks a note up by its key, which paravt-nano never learnt (``docs/nano.md``):

- a question about one named needle checks the notes' needles by position, the last, then
  the first, then each other one, each held against the needle it names, down to the one
  that is it (``The last is the blue circle; the square? no.``), then copies the fact
  (``So the square is red.`` or ``Seen: red square.``);
- a question about every needle lists them in time order with their spans
  (``I saw a red square from 3 to 5 seconds, then a blue circle from 94 to 99 seconds.``);
- which came first or last reads the first or the last sighting;
- with options, a scan of the options, one line each, compares the option with the value
  right beside it down to the one that holds it (``A. green, red: no`` ... ``D. red, red:
  yes``), and the letter of the ``yes`` line is the answer; without options the answer is
  in words (``blue``, ``the blue circle``, ``from 94 to 99 seconds``,
  ``two: a red square, then a blue circle``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agents import benchmark
from training.nano.intents import NUMBER_WORDS, Intent, target_words

_SIGHTING = re.compile(r"(\w+) (\w+) from (\d+) to (\d+) seconds")
_SPAN = re.compile(r"^(\d+(?:\.\d+)?) to (\d+(?:\.\d+)?) seconds$")
HONEST = "I can only see coloured shapes in this video"

Spans = Mapping[tuple[str, str], tuple[float, float]]


def num(x: float) -> str:
    return f"{x:g}"


def sightings(notes: Sequence[str]) -> dict[tuple[str, str], tuple[float, float]]:
    """(colour, shape) -> the span the notes report, merged across windows, in time order."""
    spans: dict[tuple[str, str], tuple[float, float]] = {}
    for note in notes:
        for colour, shape, a, b in _SIGHTING.findall(note):
            lo, hi = spans.get((colour, shape), (float(a), float(b)))
            spans[(colour, shape)] = (min(lo, float(a)), max(hi, float(b)))
    return dict(sorted(spans.items(), key=lambda kv: kv[1][0]))


def restated_key(shape: str) -> str:
    """The key a colour follows in a note: "the circle is" (one token of the nano tokenizer)."""
    return f"the {shape} is"


def _option_span(text: str) -> tuple[float, float] | None:
    found = _SPAN.match(text)
    return (float(found[1]), float(found[2])) if found else None


def scan(options: Sequence[str], value: str, match=None) -> tuple[str, str | None]:
    """The options one by one down to the one that holds `value` (``match(text)``, default
    equality), each line comparing the option with `value` right beside it: (lines, letter).

    >>> print(scan(("A. red", "B. blue"), "blue")[0])
    A. red, blue: no
    B. blue, blue: yes
    """
    match = match or (lambda text: text == value)
    lines = []
    for option in options:
        letter, text = option.split(". ", 1)
        if match(text):
            return "\n".join([*lines, f"{letter}. {text}, {value}: yes"]), letter
        lines.append(f"{letter}. {text}, {value}: no")
    return "\n".join(lines), None


def pick_lines(intent: Intent, spans: Spans, *, with_span: bool = False):
    """The check of the notes' needles for a question about one needle: the last, then the
    first, then each other one, each held against the needle it names, down to the one
    that is it: (lines, ((colour, shape), (start, end))), or None when none is it.

    >>> spans = {("red", "square"): (3.0, 5.0), ("blue", "circle"): (40.0, 42.0)}
    >>> print(pick_lines(Intent("colour", shape="square"), spans)[0])
    The last is the blue circle; the square? no.
    The first is the red square; the square? yes.
    """
    needles = list(spans.items())
    order = [len(needles) - 1, *range(len(needles) - 1)]
    target, lines = target_words(intent.colour, intent.shape), []
    for position, index in enumerate(order):
        (c, s), (a, b) = needles[index]
        label = "last" if position == 0 else "first" if index == 0 else "other"
        span = f" from {num(a)} to {num(b)} seconds" if with_span else ""
        hit = intent.colour in (None, c) and intent.shape in (None, s)
        lines.append(f"The {label} is the {c} {s}{span}; {target}? {'yes' if hit else 'no'}.")
        if hit:
            return "\n".join(lines), needles[index]
    return None


def listing(spans: Spans) -> str:
    """Every needle the notes report, in time order, with its span."""
    seen = [f"a {c} {s} from {num(a)} to {num(b)} seconds" for (c, s), (a, b) in spans.items()]
    return "I saw " + ", then ".join(seen) + "."


def sequence(spans: Spans) -> str:
    """The needles in time order, without spans: "a red square, then a blue circle"."""
    return ", then ".join(f"a {c} {s}" for c, s in spans)


def _value_of(options: Sequence[str], colour: str, shape: str) -> str:
    """What a scan compares for a needle: its colour, its shape or both, as the options
    name them."""
    text = options[0].split(". ", 1)[1] if options else ""
    if text in benchmark.COLOURS:
        return colour
    return shape if text in benchmark.SHAPES else f"{colour} {shape}"


def _finish(mode: str, options, value: str, words: str, match=None) -> tuple[str, str | None]:
    """(the scan lines, or "", and the answer): the letter with options, else `words`."""
    if mode == "letter":
        lines, letter = scan(options, value, match)
        return lines, letter
    return "", words


def after_notes(intent: Intent, mode: str, options: Sequence[str], spans: Spans):
    """(the lines after the restatement, the answer) from the needles the notes report, or
    None when they cannot answer (no needle, or not the one the question names)."""
    if intent.ask == "unknown":
        if not spans:
            return "The notes show no coloured shape.", f"{HONEST}, and the notes show none."
        return listing(spans), f"{HONEST}: {listing(spans)[6:-1]}."
    if not spans:
        return None
    if intent.ask in ("colour", "shape", "when") and intent.named:
        picked = pick_lines(intent, spans, with_span=intent.ask == "when")
        if picked is None:
            return None
        lines, ((c, s), (a, b)) = picked
        if intent.ask == "colour":
            fact = f"So {restated_key(s)} {c}."
            # in words, the fact's own last words: the nano's tokenizer spells an answer's
            # first word apart from the same word after a space ("b" "lue" for " blue"), so no
            # answer in words starts with a colour or a shape; "the circle is blue" is a copy
            scanned, answer = _finish(mode, options, c, f"{restated_key(s)} {c}")
        elif intent.ask == "shape":
            fact = f"Seen: {c} {s}."
            scanned, answer = _finish(mode, options, s, f"the {c} {s}")
        else:
            fact, span = "", f"{num(a)} to {num(b)}"
            words = f"from {span} seconds"
            if mode == "event":
                words = f"The event happens in the {num(a)} - {num(b)} seconds."

            def overlaps(text: str) -> bool:
                found = _option_span(text)
                return bool(found) and found[0] < b and a < found[1]

            scanned, answer = _finish(mode, options, span, words, overlaps)
        return "\n".join(x for x in (lines, fact, scanned) if x), answer
    seen = listing(spans)
    needles = list(spans)
    if intent.ask in ("first", "last"):
        c, s = needles[0] if intent.ask == "first" else needles[-1]
        line = f"The {intent.ask} is the {c} {s}."
        scanned, answer = _finish(mode, options, _value_of(options, c, s), f"the {c} {s}")
        return "\n".join(x for x in (line, scanned) if x), answer
    if intent.ask == "count":
        n = len(needles)
        line = f"{seen}\nI count {n} coloured shapes."
        scanned, answer = _finish(mode, options, str(n), f"{NUMBER_WORDS[n]}: {sequence(spans)}")
        return "\n".join(x for x in (line, scanned) if x), answer
    if intent.ask == "describe":
        scanned, answer = _finish(mode, options, sequence(spans), seen[6:-1])
        return "\n".join(x for x in (seen, scanned) if x), answer
    if intent.ask == "colour":  # every needle's colour, led by words as the named one is
        if len(needles) == 1:
            return seen, f"{restated_key(needles[0][1])} {needles[0][0]}"
        return seen, "the colours are " + ", then ".join(c for c, _ in needles)
    if intent.ask == "shape":  # every needle
        one = len(needles) == 1
        return seen, (f"the {needles[0][0]} {needles[0][1]}" if one else sequence(spans))
    return None
