"""The shipped paravt-nano checkpoint: small enough to live in the repository, and loadable."""

from __future__ import annotations

import json
import types

from serving.checkpoints import NANO_DIR, default_checkpoint
from serving.regime import read_regime


def test_the_shipped_checkpoint_is_at_most_20_mb_and_is_the_default():
    assert default_checkpoint() == NANO_DIR
    total = sum(p.stat().st_size for p in NANO_DIR.iterdir() if p.is_file())
    assert total <= 20_000_000, f"{total / 1e6:.1f} MB"


def test_the_shipped_checkpoint_is_a_few_million_parameter_qwen3_vl():
    from transformers import AutoModelForImageTextToText, AutoTokenizer

    config = json.loads((NANO_DIR / "config.json").read_text())
    assert config["model_type"] == "qwen3_vl"
    model = AutoModelForImageTextToText.from_pretrained(NANO_DIR)
    assert 1_000_000 < sum(p.numel() for p in model.parameters()) < 5_000_000
    tokenizer = AutoTokenizer.from_pretrained(NANO_DIR)
    # a whole second is one token to copy, after a space as in a frame's time
    # (the roles stage's --spaced-seconds)
    assert tokenizer.tokenize("crop 270")[-1] == " 270"
    assert "270" in tokenizer.tokenize("<270.0 seconds>")


def test_option_openers_are_single_weighted_tokens_of_the_shipped_tokenizer():
    """The scan copies an option's text keyed on its opener: "\nA." must be one token, in
    the question block and in the scan alike, and it and "yes" carry the content weight."""
    from transformers import AutoTokenizer

    from training.nano.loss import content_token_ids
    from training.nano.model import OPTION_OPENERS

    tokenizer = AutoTokenizer.from_pretrained(NANO_DIR)
    question = tokenizer.tokenize("What colour is the circle?\nA. green\nB. blue")
    scan = tokenizer.tokenize("The circle is blue.\nA. green, blue: no\nB. blue, blue: yes")
    for tokens in (question, scan):
        assert [t for t in tokens if t in ("\nA.", "\nB.")] == ["\nA.", "\nB."], tokens
    content = content_token_ids(tokenizer)
    openers = tokenizer.convert_tokens_to_ids(list(OPTION_OPENERS))
    assert set(openers) <= content
    assert tokenizer.convert_tokens_to_ids(scan[-1]) in content  # " yes"


def test_lookup_keys_are_single_weighted_tokens_in_notes_and_reasoning_alike():
    """The main agent looks a note's value up by its key: " the circle is" (-> colour) and
    "Seen: blue" (-> shape) must each be one token, the same one in a note and in the
    reasoning that copies from it, and carry the content weight."""
    from transformers import AutoTokenizer

    from agents.synthetic import Needle, QAItem
    from training.nano.loss import content_token_ids
    from training.nano.oracle import reasoning, window_note

    def oracle_reasoning(kind: str, question: str, options: tuple[str, ...]) -> str:
        item = QAItem(f"s1-needle_1-mc-{kind}", "multiple_choice", question, options, "A", {})
        lines = reasoning(item, {("blue", "circle"): (93.0, 99.0)})[0].split("\n")
        return lines[1]  # the fact line, after the one check line of a single needle

    tokenizer = AutoTokenizer.from_pretrained(NANO_DIR)
    video = types.SimpleNamespace(needles=[Needle(93.0, 98.5, "blue", "circle", "x")])
    written = window_note(video, [91.0, 93.0, 95.0, 97.0, 99.0], end=100.0)
    assert written == "Seen: blue circle from 93 to 99 seconds; the circle is blue.", written
    note = tokenizer.tokenize(written)
    colour = oracle_reasoning(
        "colour", "What colour is the circle that appears in the video?", ("A. blue", "B. red")
    )
    shape = oracle_reasoning(
        "shape",
        "What shape is the blue object that appears in the video?",
        ("A. circle", "B. cross"),
    )
    assert (colour, shape) == ("So the circle is blue.", "Seen: blue circle."), (colour, shape)
    colour_reasoning, shape_reasoning = tokenizer.tokenize(colour), tokenizer.tokenize(shape)
    assert " the circle is" in note and " the circle is" in colour_reasoning, note
    assert note[0] == shape_reasoning[0] == "Seen: blue", (note, shape_reasoning)
    keys = tokenizer.convert_tokens_to_ids([" the circle is", "Seen: blue"])
    assert set(keys) <= content_token_ids(tokenizer)


def test_the_shipped_checkpoint_records_the_regime_it_was_trained_for():
    regime = read_regime(NANO_DIR)
    assert regime is not None, "assets/paravt-nano/regime.json is missing"
    assert {4, 8, 16} <= set(regime.overview_frames) and regime.default_overview_frames == 4
    assert (regime.frame_width, regime.frame_height, regime.crop_max_frames) == (128, 96, 12)
    assert regime.max_new_tokens <= 512 and regime.summary_max_tokens <= 64


def test_no_answer_in_words_starts_with_a_colour_or_a_shape():
    """The tokenizer spells an answer's first word apart from the same word after a space
    ("b" "lue" against the reasoning's " blue"), so an answer that starts with a colour or a
    shape is a spelling to learn, not a copy. The oracle's answers in words start with words
    that lead them ("the circle is blue", "the colours are red, then green")."""
    import re

    from transformers import AutoTokenizer

    from agents import benchmark
    from training.nano import notes

    tokenizer = AutoTokenizer.from_pretrained(NANO_DIR)
    assert tokenizer.tokenize("<answer>blue</answer>")[1] != "Ġblue"  # why
    assert tokenizer.tokenize("<answer>the circle is blue</answer>")[-2] == "Ġblue"
    leading = re.compile(rf"({'|'.join(benchmark.COLOURS + benchmark.SHAPES)})\b")
    answers = [
        re.search(r"<answer>(.*?)</answer>", row["messages"][-1]["content"][0]["text"], re.S)
        for row in notes.note_rows(range(21200, 21500), phrased=4)
    ]
    said = [found[1] for found in answers if found]
    colours, shapes = "|".join(benchmark.COLOURS), "|".join(benchmark.SHAPES)
    assert any(re.fullmatch(rf"the ({shapes}) is ({colours})", a) for a in said)
    assert any(a.startswith("the colours are ") for a in said)
    assert [a for a in said if leading.match(a)] == []
