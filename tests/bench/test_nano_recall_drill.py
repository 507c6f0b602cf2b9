"""bench/nano_recall_drill.py: its rows ask every key once, and its score tells keys from values."""

import doctest
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from serving.checkpoints import NANO_BASE_DIR
from tests.support.bench_scripts import load_bench

#: The base recipe's tokenizer, which the drill's untrained init shares: a whole second
#: after a lone space (the shipped nano's roles stage spells " 93" as one token).
NANO = NANO_BASE_DIR


def test_the_drills_doctests_pass():
    result = doctest.testmod(load_bench("nano_recall_drill"))
    assert result.attempted >= 1 and result.failed == 0


@pytest.mark.skipif(not (NANO / "model.safetensors").exists(), reason="no base nano")
def test_each_asked_pair_gives_one_key_and_one_value_position():
    from transformers import AutoImageProcessor, AutoTokenizer

    from training.collate import FramesCollator
    from training.nano import model as nano_model
    from training.nano import warmup

    drill = load_bench("nano_recall_drill")
    tokenizer = AutoTokenizer.from_pretrained(NANO)
    collate = FramesCollator(tokenizer, AutoImageProcessor.from_pretrained(NANO))
    words, numbers = warmup.copy_pool(tokenizer)
    rows = drill.drill_rows(list(nano_model.LOOKUP_KEYS) + words, numbers, 6, seed=3)
    labels = collate(rows)["labels"][:, 1:]
    values = torch.tensor(tokenizer.convert_tokens_to_ids(list(nano_model.WHOLE_SECONDS)))
    other = torch.tensor([tokenizer.convert_tokens_to_ids("Ġ"), *tokenizer.all_special_ids])
    is_key, is_value = drill.answer_masks(labels, values, other)
    asked = [row["messages"][1]["content"][0]["text"].count(" ") // 2 for row in rows]
    assert is_key.sum(-1).tolist() == asked == is_value.sum(-1).tolist()


def test_a_folder_without_a_checkpoint_gets_what_to_do(tmp_path):
    script = Path(__file__).resolve().parents[2] / "bench" / "nano_recall_drill.py"
    done = subprocess.run(
        [sys.executable, str(script), "--init", str(tmp_path), "--json", str(tmp_path / "o.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "no checkpoint there" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "o.json").exists()
