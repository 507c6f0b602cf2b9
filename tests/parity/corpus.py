"""The messy-reply corpus that the scoring parity tests run through every reference harness.

Deterministic (no randomness beyond a fixed seed): ``python -m tests.parity.corpus`` rewrites
``tests/data/parity/corpus.json``. Replies are the final main-agent turn's text as a chat API
returns it (:mod:`agents.scoring.reply`): some with a think block the model wrote, some whose
``<think>\\n`` opener was prefilled in the prompt (the reply then starts inside the think and
closes it), some with tool blocks, answer tags, unicode, several letters, long prose.

Three families, each item with an ``id``, the ``reply`` and the gold it is scored against:
``mc`` (a gold letter and 4 or 5 options), ``grounding`` (a gold [start, end]) and ``open``
(a gold text, with a question for the rules that read it).
"""

from __future__ import annotations

import json
import random
from itertools import cycle
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "data" / "parity" / "corpus.json"
SEED = 20261201

# --- multiple choice ---------------------------------------------------------------------

MC_CORES = (
    "{L}",
    "{l}",
    "({L})",
    "{L}.",
    "{L})",
    "{L}:",
    "**{L}**",
    "({l})",
    "Option {L}",
    "option {l}",
    "Option ({L})",
    "The answer is {L}",
    "The answer is ({L}).",
    "The answer is: {L}",
    "The correct answer is {L}.",
    "The best answer is {L}",
    "The best answer is: ({L})",
    "The best option is {L}",
    "The correct option is {L}.",
    "Answer: {L}",
    "answer: {l}",
    "Answer: ({L}) {T}",
    "Best answer: {L}",
    "Best option: ({L})",
    "Best Option: ({L}) {T}",
    "I choose {L}.",
    "My answer is {L}.",
    "{L}) {T}",
    "({L}) {T}",
    "{L}. {T}",
    "{L}: {T}",
    "{L} - {T}",
    "{L}\n\nExplanation: the {t} appears near the end of the video.",
    "{T}",
    "The {t}.",
    "{L} or {M}",
    "Either {M} or {L}, probably {L}.",
    "Not {M}. It is {L}.",
    "I think it is {M}, but on reflection {L}.",
    "A man walks in; the answer is {L}.",
    "After watching, I would say {L}",
    "Based on the video, the answer is {L}.",
    "The video shows {t}, so the correct choice is {L}.",
    "{L}, because {t} is visible at 01:05.",
    "Ｂ",
    "（{L}）",
    "答案是{L}",
    "选{L}",
    "{L}。",
    "Answer：{L}",
    "{L}\u200b",
    "  {L}  ",
    "\n{L}\n",
    "[{L}]",
    "{L} {T}",
    "I",
    "A",
    "E",
    "e",
    "@",
    "N/A",
    "None of the options",
    "I cannot determine the answer from these frames.",
    "the man walks away from the table and then sits down on a chair by the window",
    "The man walks away from the table and then sits down on a chair by the window",
    "",
    "   ",
)

MC_WRAPPERS = (
    "{core}",
    "<answer>{core}</answer>",
    "<think>\nThe {t} appears after the {m}. Option {M} mentions the {m}.\n</think>\n{core}",
    "<think>\nThe {t} appears after the {m}. Option {M} mentions the {m}.\n</think>\n\n"
    "<answer>{core}</answer>",
    "The {t} appears after the {m}; {M} is tempting.\n</think>\n\n<answer>{core}</answer>",
    "The {t} appears after the {m}; {M} is tempting.\n</think>\n{core}",
    "<analysis>Compare {M} with {L}.</analysis>\n{core}",
    "<think>\nLooking at {M} first, then the rest.\n{core}",
    "<think>\nFirst guess {M}.\n</think>\n<answer></answer>\n{core}",
    "<think>\nHmm.\n</think>\n<answer>{M}</answer>\n<answer>{core}</answer>",
    "<think>\nCheck the window first.\n</think>\n<tool_call>\n"
    '{{"name": "crop_video", "arguments": {{"start_time": 10, "end_time": 20}}}}\n</tool_call>'
    "\n{core}",
    "{core}<|im_end|>",
    "Let me think about option {M}.\n\n{core}",
    "{core}\n\nI chose this because option {M} does not match the {t}.",
)

MC_TEXTS = ("red circle", "blue square", "green triangle", "yellow cross", "the man's cup")


def _mc(rng: random.Random) -> list[dict]:
    items = []
    combos = [(w, c) for w in MC_WRAPPERS for c in MC_CORES]
    letters5 = "ABCDE"
    for number, (wrapper, core) in enumerate(combos):
        n_options = 5 if number % 7 == 0 else 4
        gold = letters5[rng.randrange(n_options)]
        # the letter the reply names: the gold half the time, else another option
        named = gold if rng.random() < 0.5 else letters5[rng.randrange(n_options)]
        other = next(x for x in "DCBA" if x != named)
        text = rng.choice(MC_TEXTS)
        fill = {"L": named, "l": named.lower(), "M": other, "T": text.capitalize(), "t": text}
        fill["m"] = rng.choice([x for x in MC_TEXTS if x != text])
        reply = wrapper.format(core=core.format(**fill), **fill)
        items.append(
            {"id": f"mc-{number:04d}", "reply": reply, "gold": gold, "n_options": n_options}
        )
    return items


# --- temporal grounding ------------------------------------------------------------------

GROUNDING_CORES = (
    "{s} - {e}",
    "{s}-{e}",
    "{s} – {e}",
    "{s} — {e}",
    "{s}s-{e}s",
    "{s}s - {e}s",
    "{s} to {e}",
    "{s} to {e} seconds",
    "from {s}s to {e}s",
    "From {s} seconds to {e} seconds.",
    "The event happens in the {s} - {e} seconds.",
    "The event happens in the {s}-{e} seconds",
    "The event happens in {s} - {e} seconds into the video.",
    "Start time: {s} seconds\nEnd time: {e} seconds",
    "Starting time: {s}\nEnding time: {e}",
    "The start time for this event is {s} seconds, and the end time is {e} seconds.",
    "It starts at {s} and ends at {e}.",
    "The event starts at 00:00:{si:02d} and ends at 00:00:{ei:02d}.",
    "starts at 0:{si:02d} and ends at 0:{ei:02d}",
    "0:{si:02d} - 0:{ei:02d}",
    "00:{si:02d} - 00:{ei:02d}",
    "from 1:05 to 1:12",
    "1:05 - 1:12",
    "[{s}, {e}]",
    "[{s}s, {e}s]",
    "{s}, {e}",
    "{s}, {e}.",
    "({s}, {e})",
    "between {s} and {e} seconds",
    "<{s} seconds> to <{e} seconds>",
    "<time>{s} - {e}</time>",
    "{e} - {s}",
    "The event happens in the {e} - {s} seconds.",
    "-3 to {e}",
    "{s} - {s}",
    "at {s} seconds",
    "The event happens at {s} seconds.",
    "Around {s} seconds the person starts; it ends {e} seconds in.",
    "The event happens in the {s} - {e} seconds. A specific example is : 20.8 - 30.0 seconds",
    "A specific example is : 20.8 - 30.0 seconds",
    "5..8 seconds",
    "{s}.0.5 - {e}",
    "The moment is 12.5 - 20.0 and also 30 - 40.",
    "Into the kitchen at {s}, out at {e}.",
    "I don't know.",
    "",
)

GROUNDING_WRAPPERS = (
    "{core}",
    "<answer>{core}</answer>",
    "<think>\nThe person moves near {m} seconds, the light goes on later.\n</think>\n{core}",
    "<think>\nThe person moves near {m} seconds.\n</think>\n\n<answer>{core}</answer>",
    "The person moves near {m} seconds.\n</think>\n\n<answer>{core}</answer>",
    "The person moves near {m} seconds.\n</think>\n{core}",
    "<think>\nThe action should start around <{m} seconds>.\n</think>\n<tool_call>\n"
    '{{"name": "crop_video", "arguments": {{"start_time": {m}, "end_time": {e}}}}}\n'
    "</tool_call>",
    "<think>\nI will start around <{m} seconds> and be finished by <{e} seconds>.\n</think>\n"
    "<tool_call>\n"
    '{{"name": "crop_video", "arguments": {{"start_time": {m}, "end_time": {e}}}}}\n'
    "</tool_call>",
    "{core}<|im_end|>",
    "Looking at the frames.\n{core}",
)

GOLDS = ((12.5, 20.0), (24.3, 30.4), (0.0, 5.2), (65.0, 72.0), (3.1, 9.8), (14.0, 21.5))


def _grounding(rng: random.Random) -> list[dict]:
    items = []
    combos = [(w, c) for w in GROUNDING_WRAPPERS for c in GROUNDING_CORES]
    for number, ((wrapper, core), gold) in enumerate(zip(combos, cycle(GOLDS), strict=False)):
        start, end = gold
        if rng.random() < 0.4:  # a near miss rather than the gold
            start = round(start + rng.choice((-2.0, -0.7, 0.6, 1.5, 4.0)), 1)
            end = round(end + rng.choice((-1.2, 0.4, 2.5, 6.0)), 1)
        fill = {"s": start, "e": end, "si": int(start) % 60, "ei": int(end) % 60}
        fill["m"] = round(max(0.0, start - 3.0), 1)
        reply = wrapper.format(core=core.format(**fill), **fill)
        items.append({"id": f"tg-{number:04d}", "reply": reply, "gold": list(gold)})
    return items


# --- open-ended --------------------------------------------------------------------------

OPEN_PAIRS = (
    ("red circle", "red circle"),
    ("A red circle.", "red circle"),
    ("The red circle", "a red circle"),
    ("red red circle", "red circle"),
    ("circle red", "red circle"),
    ("blue", "red circle"),
    ("", "red circle"),
    ("the", "A"),
    ("...", "A"),
    ("A", "A"),
    ("a", "A"),
    ("在做饭。", "在做饭"),
    ("他在做饭", "在做饭"),
    ("«red» circle!", "red circle"),
    ("red—circle", "red circle"),
    ("It is red, and it is a circle.", "red circle"),
    ("Yes, the man opens the door.", "yes"),
    ("No.", "no"),
    ("yes", "Yes"),
    ("three", "3"),
    ("There are three bars.", "3"),
    ("3 bars", "3"),
    ("12%", "12"),
    ("12.4", "12"),
    ("1,234", "1234"),
    ("0", "0"),
    ("0.0", "0"),
    ("10.4", "10"),
    ("[New York, Boston]", "['New York', 'Boston']"),
    ("['New York', 'Boston']", "['New York', 'Boston']"),
    ("[2019, 2020]", "[2019, 2020]"),
    ("2019", "2019"),
    ("The organisation grew because of sales.", "organization grew"),
    ("twelve hours", "12 hrs"),
    ("Tokyo & Osaka", "Tokyo and Osaka"),
    ("unanswerable", "Unanswerable"),
    ("The answer is 42.", "42"),
    ("Final Answer: 42", "42"),
    ("42\n", "42"),
    ("It shows a graph of GDP over time.", "GDP graph over time"),
    ("The person is cooking pasta in the kitchen while talking.", "cooking pasta"),
    ("Paris", "Eiffel Tower"),
    ("Eifel tower", "Eiffel Tower"),
    ("O(n^2)", "O(n²)"),
    ("Depth-first search (DFS) is used.", "Depth-First Search (DFS)"),
)

OPEN_WRAPPERS = (
    "{reply}",
    "<answer>{reply}</answer>",
    "<think>\nThe frames show the object clearly.\n</think>\n{reply}",
    "<think>\nThe frames show the object clearly.\n</think>\n<answer>{reply}</answer>",
    "The frames show the object clearly.\n</think>\n\n<answer>{reply}</answer>",
    "<think>\nI should look again.\n</think>\n<tool_call>\n"
    '{{"name": "crop_video", "arguments": {{"start_time": 1, "end_time": 9}}}}\n</tool_call>',
)

QUESTIONS = (
    "What is shown?",
    "How many bars are there?",
    "Which city is larger?",
    "Does the man open the door?",
    "What is the person doing?",
)


def _open(rng: random.Random) -> list[dict]:
    items = []
    combos = [(w, p) for w in OPEN_WRAPPERS for p in OPEN_PAIRS]
    for number, (wrapper, (reply, gold)) in enumerate(combos):
        items.append(
            {
                "id": f"oe-{number:04d}",
                "reply": wrapper.format(reply=reply),
                "gold": gold,
                "question": rng.choice(QUESTIONS),
            }
        )
    return items


def build() -> dict[str, list[dict]]:
    rng = random.Random(SEED)
    return {"mc": _mc(rng), "grounding": _grounding(rng), "open": _open(rng)}


def main() -> None:
    corpus = build()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(corpus, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print({family: len(items) for family, items in corpus.items()}, "->", OUT)


if __name__ == "__main__":
    main()
