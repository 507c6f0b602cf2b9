"""bench/nano_lookup_probe.py: the contexts it compares and its teacher-forced check."""

from pathlib import Path

import pytest

from agents import benchmark, prompts
from tests.bench_scripts import load_bench
from training.nano import notes

ROOT = Path(__file__).resolve().parents[1]
NANO = ROOT / "assets" / "paravt-nano"


def _probe():
    return load_bench("nano_lookup_probe")


def _conversation():
    """A main-agent row's first four messages as the graph renders them."""
    row = next(notes.note_rows([7]))
    question, responses, _ = row["messages"]
    system = {"role": "system", "content": [prompts.text_part("You are a video analyst.")]}
    user = {"role": "user", "content": [prompts.text_part("Overview frames:"),
                                        prompts.text_part("<30.0 seconds>"), {"type": "image"},
                                        question["content"][0]]}  # fmt: skip
    first = {"role": "assistant", "content": [prompts.text_part("<think>\nI look.\n</think>")]}
    return row, [system, user, first, responses]


def test_each_context_leaves_out_one_part_and_ends_with_the_same_last_turn():
    probe, (row, messages) = _probe(), _conversation()
    variants = probe.contexts(messages, ["jpeg"], "<think>\nSo.\n</think>")
    assert set(variants) == set(probe.VARIANTS)
    for chosen, _ in variants.values():
        assert chosen[-1]["content"][0]["text"] == "<think>\nSo.\n</think>"
        assert chosen[-2] is messages[3]  # the notes, right before the last turn
    assert variants["full"][0][:4] == messages and variants["full"][1] == ["jpeg"]
    assert variants["no_system"][0][0] is messages[1]
    assert variants["no_first_turn"][0][:3] == [messages[0], messages[1], messages[3]]
    no_overview = variants["no_overview"][0][1]["content"]
    assert no_overview == [messages[1]["content"][-1]] and variants["no_overview"][1] == []
    assert variants["notes_only"][0][0] == row["messages"][0]  # the note-to-answer layout


@pytest.mark.skipif(not (NANO / "model.safetensors").exists(), reason="no shipped nano")
def test_the_check_tells_the_notes_answer_from_a_wrong_one():
    torch = pytest.importorskip("torch")
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    from training.collate import FramesCollator
    from training.nano.loss import content_mask

    probe = _probe()
    tokenizer = AutoTokenizer.from_pretrained(NANO)
    collate = FramesCollator(tokenizer, AutoImageProcessor.from_pretrained(NANO))
    model = AutoModelForImageTextToText.from_pretrained(NANO, dtype=torch.float32).eval()
    content = content_mask(tokenizer)
    rows = notes.note_rows([18])  # one needle; its multiple-choice question asks its colour
    row = next(r for r in rows if "colour" in r["messages"][0]["content"][0]["text"])
    turn = row["messages"][-1]["content"][0]["text"]
    assert probe.last_turn_right(model, collate([row]), content)
    colour = next(c for c in benchmark.COLOURS if f"is {c}." in turn)
    other = next(c for c in benchmark.COLOURS if c != colour)
    wrong = {**row, "messages": [*row["messages"][:-1], {"role": "assistant", "content": [
        prompts.text_part(turn.replace(f"is {colour}.", f"is {other}."))]}]}  # fmt: skip
    batch = collate([wrong])
    assert not probe.last_turn_right(model, batch, content)
    miss = probe.first_miss(model, batch, content)  # the input token whose next one is wrong
    assert tokenizer.decode(batch["input_ids"][0, miss : miss + 1]).endswith(" is"), miss


def test_the_probes_doctests_pass():
    import doctest

    result = doctest.testmod(_probe())
    assert result.attempted >= 2 and result.failed == 0
