"""What a question about a needle video asks, as paravt-nano's main agent restates it.

Questions come in many wordings (``training.nano.phrasing``) but ask one of a few things, an
*intent*: the colour of a named shape (or of every shape), the shape of a named colour (or
every shape), when a named needle appears, how many needles appear, which appears first or
last, what happens, or something the video cannot show. Every main-agent turn opens with
the intent in one fixed sentence (:func:`restatement`), followed by how it will answer: with
a letter when the question gives options, in the event sentence when the question block asks
for it (grounding), else in words. The rest of the turn reads that sentence, not the wording.

A benchmark item (``agents.benchmark``) carries no intent; :func:`intent_of` reads it off
the item's id and question, as the benchmark writes them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from agents import benchmark
from agents.synthetic import QAItem

ASKS = ("colour", "shape", "when", "count", "first", "last", "describe", "unknown")
MODES = ("letter", "words", "event")
#: The benchmark's item-id suffixes -> what they ask.
BENCHMARK_ASKS = {
    "colour": "colour",
    "shape": "shape",
    "ground": "when",
    "count": "count",
    "order": "first",
    "open": "last",
}
NUMBER_WORDS = ("zero", "one", "two", "three", "four")
_HOW = {"letter": "with a letter", "words": "in words", "event": "in the event format"}


@dataclass(frozen=True)
class Intent:
    """What a question asks (`ask`, one of :data:`ASKS`) and the needle it names, if any."""

    ask: str
    colour: str | None = None
    shape: str | None = None

    def __post_init__(self) -> None:
        if self.ask not in ASKS:
            raise ValueError(f"unknown ask {self.ask!r}; known: {', '.join(ASKS)}")

    @property
    def named(self) -> bool:
        return bool(self.colour or self.shape)

    def to_json(self) -> dict:
        return asdict(self)


def target_words(colour: str | None, shape: str | None) -> str:
    """How a turn names the question's needle: "the circle", "the red one", "the red circle".

    >>> target_words("red", None), target_words(None, "circle"), target_words("red", "circle")
    ('the red one', 'the circle', 'the red circle')
    """
    if colour and shape:
        return f"the {colour} {shape}"
    return f"the {colour} one" if colour else f"the {shape}"


def _what(intent: Intent) -> str:
    target = target_words(intent.colour, intent.shape) if intent.named else ""
    return {
        "colour": f"the colour of {target}" if intent.named else "the colours of the shapes",
        "shape": f"the shape of {target}" if intent.named else "which shapes appear",
        "when": f"when {target} appears",
        "count": "how many coloured shapes appear",
        "first": "which shape appears first",
        "last": "which shape appears last",
        "describe": "what happens in the video",
        "unknown": "something other than coloured shapes",
    }[intent.ask]


def restatement(intent: Intent, mode: str) -> str:
    """The sentence every main-agent turn opens with.

    >>> restatement(Intent("colour", shape="circle"), "letter")
    'The question asks the colour of the circle; I answer with a letter.'
    >>> restatement(Intent("when", colour="blue", shape="circle"), "words")
    'The question asks when the blue circle appears; I answer in words.'
    """
    return f"The question asks {_what(intent)}; I answer {_HOW[mode]}."


def answer_mode(item: QAItem, *, chat: bool) -> str:
    """How the question block asks for the answer: a letter with options; the event sentence
    when a chat-style block (``agents.prompts.question_text``) asks for grounding; else
    words. A benchmark prompt asks for nothing but the answer tag."""
    if item.options:
        return "letter"
    return "event" if chat and item.kind == "grounding" else "words"


def intent_of(item: QAItem) -> Intent:
    """The item's intent: stored in ``target["intent"]`` by the phrasing grammar, or read off
    a benchmark item's id and question.

    >>> item = QAItem("v-mc-colour", "multiple_choice", "What colour is the circle?", (), "A", {})
    >>> intent_of(item)
    Intent(ask='colour', colour=None, shape='circle')
    """
    stored = item.target.get("intent") if isinstance(item.target, dict) else None
    if stored:
        return Intent(**stored)
    ask = BENCHMARK_ASKS[item.id.rsplit("-", 1)[-1]]
    words = item.question.rstrip("?").split()
    colour = next((w for w in words if w in benchmark.COLOURS), None)
    shape = next((w for w in words if w in benchmark.SHAPES), None)
    if ask == "colour":
        return Intent(ask, None, shape)
    if ask == "shape":
        return Intent(ask, colour, None)
    if ask == "when":
        return Intent(ask, colour, shape)
    return Intent(ask)
