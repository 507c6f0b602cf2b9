"""SFT through TRL: the config and its CLI, the FSDP launch config, and a run that learns."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from agents.question import Question
from training.sft import SFTRunConfig, main, parse_args

ROOT = Path(__file__).resolve().parents[2]


def test_every_config_field_has_help_that_the_cli_prints(capsys):
    fields = dataclasses.fields(SFTRunConfig)
    assert all(f.metadata.get("help") for f in fields)
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    printed = " ".join(capsys.readouterr().out.split())
    for f in fields:
        assert f"--{f.name}" in printed
        assert " ".join(f.metadata["help"].split())[:30] in printed


def test_flags_fill_the_config_and_the_trl_config():
    argv = "--model m --traces a.jsonl b.jsonl --max_steps 3 --no_gradient_checkpointing"
    argv += ' --learning-rate 0.001 --sft_args {"optim":"sgd","logging_first_step":true}'
    config = parse_args(argv.split())
    assert config.traces == ["a.jsonl", "b.jsonl"] and config.statuses == ["answered"]
    assert config.max_steps == 3 and not config.gradient_checkpointing
    sft = config.sft_config()
    assert sft.learning_rate == 0.001 and sft.max_steps == 3 and sft.optim == "sgd"
    assert sft.logging_first_step and sft.assistant_only_loss and not sft.gradient_checkpointing
    assert not getattr(sft, "activation_checkpointing", False)
    assert sft.remove_unused_columns is False  # the collator needs the messages and frames
    assert sft.dataset_kwargs == {"skip_prepare_dataset": True}
    assert sft.save_strategy == "no"


def test_no_rows_is_a_clear_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(ValueError, match="no SFT rows"):
        main(["--model", str(tmp_path), "--traces", str(empty)])


def test_accelerate_fsdp_config_loads_and_names_real_layers():
    from accelerate.commands.config.config_args import load_config_from_file
    from transformers.models.qwen3_vl import modeling_qwen3_vl

    config = load_config_from_file(str(ROOT / "training/configs/accelerate_fsdp.yaml"))
    assert config.distributed_type == "FSDP" and config.fsdp_config["fsdp_version"] == 2
    assert config.fsdp_config["fsdp_state_dict_type"] == "FULL_STATE_DICT"
    layers = config.fsdp_config["fsdp_transformer_layer_cls_to_wrap"].split(",")
    model_class = modeling_qwen3_vl.Qwen3VLForConditionalGeneration
    assert set(layers) == set(model_class._no_split_modules)


def oracle_traces(tmp_path: Path, n: int) -> list[dict]:
    """Traces of an agent that knows where the needle is: crop around it, then answer."""
    from langgraph.checkpoint.memory import InMemorySaver

    from agents.synthetic import make_video
    from graphs.builder import compile_graph
    from graphs.context import Context
    from graphs.runs.run import run_question
    from graphs.store.sqlite_board import Board
    from tests.support.fakes import ScriptedModel, calls

    colors = ["red", "green", "blue", "yellow", "magenta", "cyan", "white", "orange"]
    context = Context(
        overview_frames=4, overview_max_pixels=4096, crop_max_frames=2, crop_max_pixels=4096
    )
    board = Board(tmp_path / "board.sqlite")
    traces = []
    for seed in range(n):
        video = make_video(
            tmp_path / f"v{seed}.mp4", seed=seed, duration=8.0, fps=4, width=64, height=64
        )
        needle = video.needles[0]
        letter = "ABCDEFGH"[colors.index(needle.color)]
        window = (max(0.0, needle.start - 1), min(video.duration, needle.end + 1))
        model = ScriptedModel(
            main=[
                calls(window, think=f"Something appears near {needle.start:.0f} seconds."),
                f"<think>\nThe window shows a {needle.color} {needle.shape}.\n</think>\n\n"
                f"<answer>{letter}</answer>",
            ],
            sub=lambda request, n=needle: f"A {n.color} {n.shape} with the word {n.word}.",
        )
        graph = compile_graph(model, board, checkpointer=InMemorySaver())
        options = [f"{letter}. {color}" for letter, color in zip("ABCDEFGH", colors, strict=True)]
        result = asyncio.run(
            run_question(
                graph,
                board,
                video_path=video.path,
                question=Question("What colour is the shape?", options=options),
                context=context,
            )
        )
        assert result.status == "answered"
        traces.append(result.trace)
    board.close()
    return traces


@pytest.mark.slow
def test_sft_lowers_the_loss_and_writes_a_servable_checkpoint(tmp_path):
    from graphs.runs.traces import write_jsonl
    from serving.engine import GenerationSettings, LocalVLM
    from serving.tiny_model import build_tiny_model

    base = build_tiny_model(tmp_path / "base", seed=0)
    write_jsonl(oracle_traces(tmp_path, 8), tmp_path / "traces.jsonl")
    out = tmp_path / "sft"
    argv = f"--model {base} --output_dir {out} --traces {tmp_path / 'traces.jsonl'}"
    argv += " --max_steps 24 --per_device_train_batch_size 4 --learning_rate 1e-3"
    argv += " --lr_scheduler_type constant --warmup_steps 0 --no_gradient_checkpointing"
    main([*argv.split(), "--threads", "1"])

    curve = json.loads((out / "loss_curve.json").read_text())
    losses = [loss for _, loss in curve]
    assert len(losses) == 24
    assert losses[-1] < losses[0] - 1.0, losses
    assert sum(losses[-4:]) < sum(losses[:4])
    for name in ("config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja"):
        assert (out / name).is_file(), name
    assert (out / "preprocessor_config.json").read_text() == (
        base / "preprocessor_config.json"
    ).read_text()
    assert (out / "video_preprocessor_config.json").is_file()

    served = LocalVLM(out)  # what `python -m serving.server --model DIR` loads
    prompt = served.build_prompt([{"role": "user", "content": "Hi"}], [])
    done = served.generate(prompt, GenerationSettings(max_tokens=3, temperature=0.0))
    assert 1 <= len(done.token_ids) <= 3
    assert served.end_ids == LocalVLM(base).end_ids
