"""One config-to-CLI mechanism: dataclass fields become flags in either spelling, bounded
fields are checked as they are parsed, and only what the user typed reaches the config."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

import pytest

from graphs.context import LIMITS, Context, add_context_arguments, context_from_args
from graphs.flags import add_dataclass_flags, given


@dataclass
class Run:
    model: str = field(metadata={"help": "Checkpoint."})
    steps: int = field(default=5, metadata={"help": "Steps."})
    sizes: tuple[int, ...] = field(default=(4, 8), metadata={"help": "Sizes."})
    files: list[str] = field(default_factory=list, metadata={"help": "Files."})
    bf16: bool = field(default=False, metadata={"help": "Half precision."})
    checkpointing: bool = field(default=True, metadata={"help": "Recompute."})
    note: str | None = field(default=None, metadata={"help": "Free text."})


def parse(argv: str, cls=Run, **kwargs):
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_dataclass_flags(parser, cls, "run", underscores=True, **kwargs)
    return given(cls, parser.parse_args(argv.split()))


def test_both_spellings_negatives_and_sequence_types():
    assert parse("--model m") == {"model": "m"}  # defaults stay the dataclass's
    values = parse("--model m --steps 2 --sizes 16 32 --files a b --bf16 --no_checkpointing")
    assert values == {
        "model": "m",
        "steps": 2,
        "sizes": (16, 32),
        "files": ["a", "b"],
        "bf16": True,
        "checkpointing": False,
    }
    assert parse("--model=m --no-checkpointing --note x") == {
        "model": "m",
        "checkpointing": False,
        "note": "x",
    }
    assert Run(**parse("--model m --sizes 64")).sizes == (64,)


def test_a_required_field_and_a_bad_value_stop_the_parse():
    with pytest.raises(SystemExit):
        parse("--steps 2")  # --model is required
    with pytest.raises(argparse.ArgumentError, match="not a valid int"):
        parse("--model m --steps two")


def test_the_context_flags_hold_values_to_their_limits_and_keep_the_base():
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_context_arguments(parser)
    base = Context(overview_frames=8, max_new_tokens=256)
    context = context_from_args(parser.parse_args(["--crop-max-frames", "4"]), base)
    assert (context.overview_frames, context.max_new_tokens, context.crop_max_frames) == (8, 256, 4)
    with pytest.raises(argparse.ArgumentError, match="argument --crop-max-frames: must be from 1"):
        parser.parse_args(["--crop-max-frames", "65"])  # one spelling: the message names it
    with pytest.raises(SystemExit):
        parser.parse_args(["--crop_max_frames", "4"])  # underscores only where asked for
    assert "crop_max_frames" in LIMITS
    assert context_from_args(parser.parse_args(["--no-think-prefix"])).think_prefix is False


def test_help_names_each_field_with_its_default(capsys):
    with pytest.raises(SystemExit):
        parse("--help")
    printed = capsys.readouterr().out
    assert "--steps STEPS, --steps STEPS" not in printed  # one spelling when both agree
    assert "Steps. (default: 5)" in printed and "--bf16, --no-bf16" in printed
