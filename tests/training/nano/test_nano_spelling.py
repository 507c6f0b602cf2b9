"""training.nano.spelling: a sub-agent row's targets spell each spaced second as the base did;
what every row reads, and every other row, is collated as the server tokenizes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from training.nano import model as nano_model
from training.nano.extend import extend

transformers = pytest.importorskip("transformers")

from training.collate import FramesCollator  # noqa: E402
from training.nano.spelling import SubAgentSpelling, base_spellings  # noqa: E402

TEXTS = ["Seen: blue circle from 94 to 99 seconds.", "window 90.0 - 120.0 seconds"] * 4
NOTE = "Seen: blue circle from 94 to 99 seconds; the circle is blue."


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return nano_model.build_nano(tmp_path_factory.mktemp("base"), TEXTS, seed=5)


@pytest.fixture(scope="module")
def spaced(base, tmp_path_factory) -> Path:
    tokens = nano_model.VERDICTS + nano_model.SPACED_SECONDS
    return extend(base, tmp_path_factory.mktemp("spaced") / "init", tokens)


def _row(role: str) -> dict:
    def text(words: str) -> list[dict]:
        return [{"type": "text", "text": words}]

    return {
        "role": role,
        "messages": [
            {"role": "user", "content": text("The window 90.0 - 120.0 seconds of a video.")},
            {"role": "assistant", "content": text(NOTE)},
        ],
    }


def _collators(path: Path):
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    processor = transformers.AutoImageProcessor.from_pretrained(path)
    return tokenizer, FramesCollator(tokenizer, processor), SubAgentSpelling(tokenizer, processor)


def _split(encoded):
    read = [t for t, m in zip(encoded.input_ids, encoded.loss_mask, strict=True) if not m]
    said = [t for t, m in zip(encoded.input_ids, encoded.loss_mask, strict=True) if m]
    return read, said


def test_a_sub_agent_row_says_its_spans_as_the_base_spelt_them(base, spaced):
    tokenizer, plain, respelt = _collators(spaced)
    read, said = _split(respelt.encode_row(_row("sub_agent")))
    server_read, server_said = _split(plain.encode_row(_row("sub_agent")))

    base_tokenizer = transformers.AutoTokenizer.from_pretrained(base)
    note = base_tokenizer.encode(NOTE, add_special_tokens=False)
    assert said[: len(note)] == note
    closing = said[len(note) :]  # the turn's end, as the server would say it
    assert (
        closing == server_said[-len(closing) :] == [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    )
    assert " 94" in tokenizer.convert_ids_to_tokens(server_said)  # what the server would say
    assert tokenizer.decode(said) == tokenizer.decode(server_said)
    assert read == server_read  # the prompt is read as the server tokenizes it
    assert " 90" in tokenizer.convert_ids_to_tokens(read)


def test_every_other_row_is_collated_as_the_server_tokenizes_it(spaced):
    _, plain, respelt = _collators(spaced)
    for role in ("main_agent", "verifier"):
        assert respelt.encode_row(_row(role)) == plain.encode_row(_row(role))


def test_a_tokenizer_without_spaced_seconds_is_refused_with_what_to_do(base):
    tokenizer = transformers.AutoTokenizer.from_pretrained(base)
    with pytest.raises(ValueError, match="--spaced-seconds"):
        base_spellings(tokenizer)
