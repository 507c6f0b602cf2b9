"""Questions as people type them: the training grammar, the held-out set it never produces,
and how the held-out answers are scored (bench/nano_phrasings.py)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from agents.synthetic import Needle, SyntheticVideo
from tests.support.bench_scripts import load_bench
from training.nano import phrasing
from training.nano.intents import Intent, answer_mode, intent_of, restatement
from training.nano.notes import plan_video, window_notes
from training.nano.oracle import reasoning
from training.nano.reasoning import sightings

ROOT = Path(__file__).resolve().parents[2]


def skeleton(text: str) -> str:
    """A wording without its slots' words, casing or punctuation."""
    text = re.sub(r"\{\w+\}", "X", text).lower()
    return " ".join(re.sub(r"[^a-z x']", " ", text).split())


def held_out():
    return load_bench("nano_phrasings")


def test_no_held_out_wording_is_a_training_template():
    training = {skeleton(t) for group in phrasing.TEMPLATES.values() for t in group}
    for kind, templates in held_out().TEMPLATES.items():
        for template in templates:
            assert skeleton(template) not in training, (kind, template)


def test_the_training_grammar_never_asks_a_held_out_question():
    bench = held_out()
    filled = set()
    for templates in bench.TEMPLATES.values():
        for template in templates:
            for colour, shape in (("red", "circle"), ("blue", "square"), ("green", "cross")):
                text = template.format(colour=colour, shape=shape, needle=f"{colour} {shape}")
                filled.add(skeleton(text))
    rng = random.Random(0)
    for seed in range(2000):
        question = phrasing.phrased(plan_video(seed), rng, 0).question
        core = skeleton(question)
        # a held-out wording of five words or more never sits inside a training question;
        # a shorter one ("colour of the x") may, as part of a longer sentence
        assert not any(f == core or (len(f.split()) >= 5 and f in core) for f in filled), question


def test_training_code_never_reads_the_held_out_set():
    for path in (ROOT / "training").rglob("*.py"):
        text = path.read_text()
        assert "nano_phrasings" not in text.replace("bench/nano_phrasings.py", ""), path
        assert not re.search(r"^\s*(import|from) bench\b", text, re.M), path


def test_the_held_out_set_is_the_same_every_time_and_covers_every_cell():
    bench = held_out()
    videos = [plan_video(1_000_000 + i) for i in range(12)]
    first, again = bench.held_out(videos, per_cell=4), bench.held_out(videos, per_cell=4)
    assert first == again
    cells = {(i.kind, bool(i.options)) for i in first}
    assert cells == {
        (k, o) for k in bench.KINDS for o in (False, True) if o is False or k in bench.WITH_OPTIONS
    }
    for item in first:
        if item.options:
            assert len(item.options) == 4 and item.letter in "ABCD"


SPANS = ("from 10 to 14 seconds", "from 94 to 99 seconds")
HONEST = "I can only see coloured shapes in this video"
VIDEO = SyntheticVideo(
    "v.mp4",
    1_000_000,
    120.0,
    1.0,
    128,
    96,
    (Needle(10.0, 14.0, "red", "square", ""), Needle(94.0, 99.0, "blue", "circle", "")),
)


@pytest.mark.parametrize(
    ("kind", "named", "answer", "right"),
    [
        ("colour", {"shape": "circle"}, "blue", True),
        ("colour", {"shape": "circle"}, "blue, not red", False),
        ("colour", {"shape": "circle"}, "D", False),
        ("shape", {"colour": "blue"}, "the blue circle", True),
        ("shape", {}, "a red square, then a blue circle", True),
        ("shape", {}, "the blue circle", False),
        ("count", {}, "two: a red square, then a blue circle", True),
        ("count", {}, "3", False),
        ("first", {}, "the red square", True),
        ("first", {}, "the blue circle", False),
        ("describe", {}, f"a red square {SPANS[0]}, then a blue circle {SPANS[1]}", True),
        ("describe", {}, "a blue circle, then a red square", False),
        (
            "unanswerable",
            {},
            f"{HONEST}: a red square {SPANS[0]}, then a blue circle {SPANS[1]}.",
            True,
        ),
        ("unanswerable", {}, "A man is speaking.", False),
    ],
)
def test_a_words_answer_is_right_when_it_names_what_the_video_shows(kind, named, answer, right):
    bench = held_out()
    named = {"colour": None, "shape": None, **named}
    item = bench.Phrased("x", "v.mp4", kind, "?", (), None, VIDEO.needles, named, 120.0)
    scored = bench.score(item, answer)
    assert scored["score"] == float(right)
    assert scored["letter_leak"] == (answer == "D")


def test_a_when_answer_scores_its_overlap_and_an_option_its_letter():
    bench = held_out()
    named = {"colour": "blue", "shape": "circle"}
    when = bench.Phrased("x", "v.mp4", "when", "?", (), None, VIDEO.needles, named, 120.0)
    assert bench.score(when, "from 94 to 99 seconds")["score"] == 1.0
    assert bench.score(when, "from 96 to 99 seconds")["score"] == pytest.approx(0.6)
    opts = ("A. red", "B. blue", "C. green", "D. yellow")
    colour = bench.Phrased("x", "v.mp4", "colour", "?", opts, "B", VIDEO.needles, named, 120.0)
    assert bench.score(colour, "B")["score"] == 1.0 and bench.score(colour, "A")["score"] == 0.0


def test_every_training_wording_restates_its_intent_and_is_answered_in_kind():
    rng = random.Random(1)
    for seed in range(300):
        video = plan_video(seed)
        item = phrasing.phrased(video, rng, 0)
        intent = intent_of(item)
        chat = bool(seed % 2)
        mode = answer_mode(item, chat=chat)
        assert restatement(intent, mode).startswith("The question asks ")
        found = reasoning(item, sightings(window_notes(video)), chat=chat)
        if found is None:
            assert intent.named, item  # only a named needle can be missing from the notes
            continue
        answer = found[1]
        if item.options:
            assert answer == item.answer, (item, found)
        else:
            assert not re.fullmatch(r"[A-D]", answer), "never a letter without options"


def test_an_intent_names_only_what_its_question_names():
    assert Intent("when", "blue", None).named and not Intent("count").named
    with pytest.raises(ValueError, match="unknown ask"):
        Intent("weather")
