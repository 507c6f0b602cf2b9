"""training.nano.extend: a trained nano gains whole tokens and keeps every old id and row."""

from __future__ import annotations

from pathlib import Path

import pytest

from training.nano import model as nano_model
from training.nano.extend import extend, missing_tokens

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TEXTS = ["The blue circle appears from 94 to 99 seconds.", "Seen: red square.", "SUPPORTED"] * 4


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return nano_model.build_nano(tmp_path_factory.mktemp("base"), TEXTS, seed=3)


def _embeddings(path: Path):
    model = transformers.Qwen3VLForConditionalGeneration.from_pretrained(path)
    return model, model.get_input_embeddings().weight.detach()


def test_a_missing_token_becomes_one_new_id_whose_row_is_its_spelling_s_mean(base, tmp_path):
    before = transformers.AutoTokenizer.from_pretrained(base)
    pieces = before.encode("PERHAPSNOT", add_special_tokens=False)
    assert len(pieces) > 1  # the base spells it in several tokens

    (base / "sft.jsonl").write_text('{"step": 1}\n')  # the base's own training log
    out = extend(base, tmp_path / "init", ("SUPPORTED", "PERHAPSNOT"))

    after = transformers.AutoTokenizer.from_pretrained(out)
    assert missing_tokens(after, ("PERHAPSNOT",)) == []
    new_id = after.convert_tokens_to_ids("PERHAPSNOT")
    assert new_id == len(before)  # appended: every old id keeps its place
    text = "<|im_start|>user\nThe blue circle: SUPPORTED?<|im_end|>"
    assert after.encode(text) == before.encode(text)
    assert after.encode("x PERHAPSNOT y") == [*before.encode("x "), new_id, *before.encode(" y")]

    (_, old_rows), (model, new_rows) = _embeddings(base), _embeddings(out)
    assert torch.equal(new_rows[: len(before)], old_rows)
    assert torch.allclose(new_rows[new_id], old_rows[pieces].mean(dim=0))
    assert model.config.text_config.vocab_size == len(after)
    assert model.lm_head.weight.shape[0] == len(after)
    assert not (out / "sft.jsonl").exists(), "the base's log is not the new checkpoint's"
    assert (out / "preprocessor_config.json").read_bytes() == (
        base / "preprocessor_config.json"
    ).read_bytes()


def test_a_base_that_spells_every_token_whole_is_used_as_it_is(base, tmp_path):
    assert extend(base, tmp_path / "init", nano_model.VERDICTS) == base
    assert not (tmp_path / "init").exists()


def test_spaced_seconds_give_each_number_of_a_span_its_own_key(base, tmp_path):
    before = transformers.AutoTokenizer.from_pretrained(base)
    span = "Seen: blue circle from 94 to 99 seconds."
    pieces = before.convert_ids_to_tokens(before.encode(span, add_special_tokens=False))
    at = [k for k, piece in enumerate(pieces) if piece in ("94", "99")]
    assert [pieces[k - 1] for k in at] == ["Ġ", "Ġ"]  # the same key before both numbers

    out = extend(base, tmp_path / "init", nano_model.VERDICTS + nano_model.SPACED_SECONDS)

    after = transformers.AutoTokenizer.from_pretrained(out)
    ids = after.encode(span, add_special_tokens=False)
    pieces = after.convert_ids_to_tokens(ids)
    assert " 94" in pieces and " 99" in pieces
    assert pieces[pieces.index(" 94") - 1] != pieces[pieces.index(" 99") - 1]
    assert after.decode(ids) == span
    for text in ('{"start_time": 30, "end_time": 600}', "at 37.5 s, 1000 frames"):
        assert after.decode(after.encode(text, add_special_tokens=False)) == text


def test_a_copy_extended_from_another_base_is_refused_not_reused(base, tmp_path):
    out = extend(base, tmp_path / "init", ("SUPPORTED", "PERHAPSNOT"))
    assert extend(base, out, ("SUPPORTED", "PERHAPSNOT")) == out  # its own base: reused
    other = nano_model.build_nano(tmp_path / "other", TEXTS, seed=4)
    with pytest.raises(ValueError, match=r"was not extended from .*other: remove it"):
        extend(other, out, ("SUPPORTED", "PERHAPSNOT"))
