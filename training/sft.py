"""Supervised fine-tuning on graph traces with TRL's SFTTrainer; writes a servable checkpoint.

    python -m training.sft --model DIR --output_dir runs/sft --traces traces.jsonl
    accelerate launch --config_file training/configs/accelerate_fsdp.yaml -m training.sft ...

How it sits on TRL (1.16):

- ``SFTTrainer`` runs the loop (its loss, token accuracy, entropy, logging, FSDP/DeepSpeed
  through accelerate). The rows are TRL-conversational (``training.sft_data``) and batches
  come from ``training.collate.FramesCollator``, which tokenizes exactly as the inference
  server does and masks all but the assistant turns (``assistant_only_loss``).
- TRL treats a dataset with an ``images`` column as a vision dataset and then demands a
  ``ProcessorMixin``; Qwen3-VL's processor cannot be built without torchvision (its video
  processor needs it). So the tokenizer is the ``processing_class``, the column is handed
  over renamed ``frames`` (the collator reads either name), and dataset preparation is
  skipped (``skip_prepare_dataset``): the collator does it per batch.
- The output directory holds model, tokenizer and image/video processor files, in the
  Qwen3-VL Hub layout: ``serving.server --model DIR`` and SGLang load it as is.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from transformers import (
    AutoImageProcessor,
    AutoModelForImageTextToText,
    AutoTokenizer,
)
from trl import SFTConfig, SFTTrainer

from graphs.flags import add_dataclass_flags, given
from training.collate import FramesCollator
from training.trainer_args import checkpointing_field

log = logging.getLogger(__name__)

#: Processor files copied from the base checkpoint (the parts AutoProcessor assembles).
PROCESSOR_FILES = ("preprocessor_config.json", "video_preprocessor_config.json")


def _help(default: Any, text: str) -> Any:
    return field(default=default, metadata={"help": text})


@dataclass
class SFTRunConfig:
    """One SFT run: data, model, and the training knobs that matter (the rest: ``sft_args``)."""

    model: str = _help("", "Base checkpoint directory (model, tokenizer, image processor).")
    output_dir: str = _help("runs/sft", "Where the trained, servable checkpoint is written.")
    traces: list[str] = field(
        default_factory=list, metadata={"help": "Trace JSONL files (graphs/runs/traces.py)."}
    )
    paravt_parquet: list[str] = field(
        default_factory=list, metadata={"help": "ParaVT parquet files (prompt, videos, extra_info)"}
    )
    dataset: list[str] = field(
        default_factory=list, metadata={"help": "Datasets saved by `python -m training.sft_data`."}
    )
    video_root: str | None = _help(None, "Root of relative video paths in ParaVT parquet rows.")
    subagents: bool = _help(False, "Also train on sub-agent summaries, as rows of their own.")
    statuses: list[str] = field(
        default_factory=lambda: ["answered"],
        metadata={"help": "Trace statuses to keep (answered, no_answer, failed)."},
    )
    overview_frames: int = _help(64, "Overview frames of the first turn of ParaVT rows.")
    overview_max_pixels: int = _help(50_176, "Pixel budget of each overview frame (ParaVT rows).")
    assistant_only_loss: bool = _help(True, "Loss on assistant turns only (incl. the prefill).")
    max_length: int | None = _help(None, "Truncate rows to this many tokens (None: never).")
    learning_rate: float = _help(2e-5, "Peak learning rate (ParaVT's SFT: 2e-5, cosine).")
    lr_scheduler_type: str = _help("cosine", "Learning-rate schedule.")
    warmup_steps: float = _help(0.03, "Warmup steps, or a fraction of all steps if below 1.")
    weight_decay: float = _help(0.0, "AdamW weight decay.")
    num_train_epochs: float = _help(1.0, "Epochs over the rows (ignored when max_steps > 0).")
    max_steps: int = _help(-1, "Optimizer steps to run; -1 runs num_train_epochs.")
    per_device_train_batch_size: int = _help(1, "Rows per device per micro-batch.")
    gradient_accumulation_steps: int = _help(1, "Micro-batches per optimizer step.")
    gradient_checkpointing: bool = _help(True, "Recompute activations in backward (saves memory).")
    bf16: bool = _help(False, "Compute in bfloat16 (autocast / FSDP mixed precision; GPUs).")
    model_dtype: str = _help(
        "float32",
        "Dtype the weights are kept in: float32 master weights (with --bf16, the standard "
        "mixed precision), or bfloat16 (half the memory, but small updates round away).",
    )
    logging_steps: int = _help(1, "Log loss every this many steps.")
    save_steps: int = _help(0, "Save a resumable checkpoint every this many steps (0: never).")
    seed: int = _help(0, "Seed of the shuffle and of the initialisation of new weights.")
    report_to: str = _help("none", "Where to report metrics: none, tensorboard, wandb, ...")
    sft_args: str = _help("{}", 'Extra trl.SFTConfig fields as JSON, e.g. \'{"optim": "sgd"}\'.')
    resume_from_checkpoint: str | None = _help(None, "A checkpoint-N directory to resume from.")
    threads: int | None = _help(None, "torch CPU threads (None: torch's default).")

    def sft_config(self) -> SFTConfig:
        """The ``trl.SFTConfig`` of this run."""
        names = (
            "output_dir",
            "learning_rate",
            "lr_scheduler_type",
            "warmup_steps",
            "weight_decay",
            "num_train_epochs",
            "max_steps",
            "per_device_train_batch_size",
            "gradient_accumulation_steps",
            "gradient_checkpointing",
            "bf16",
            "logging_steps",
            "seed",
            "report_to",
            "assistant_only_loss",
            "max_length",
        )
        values = {name: getattr(self, name) for name in names}
        values.update(
            save_strategy="steps" if self.save_steps else "no",
            save_steps=self.save_steps or 500,
            remove_unused_columns=False,  # the collator needs messages and frames
            dataset_kwargs={"skip_prepare_dataset": True},
            dataloader_pin_memory=torch.cuda.is_available(),  # pinning needs an accelerator
        )
        values[checkpointing_field(SFTConfig)] = values.pop("gradient_checkpointing")
        return SFTConfig(**{**values, **json.loads(self.sft_args)})


def load_rows(config: SFTRunConfig):
    """Every row of the run's sources, as one ``datasets.Dataset``.

    The graph stack (langgraph, PyAV) is imported only for traces and parquet files, so a
    training node fed saved ``--dataset`` folders needs only torch, transformers, TRL and
    datasets.
    """
    from datasets import concatenate_datasets, load_from_disk

    parts = [load_from_disk(path) for path in config.dataset]
    if config.traces or config.paravt_parquet:
        from graphs.context import Context
        from graphs.runs.traces import read_jsonl
        from training.sft_data import paravt_rows, read_paravt_parquet, to_dataset, traces_to_rows

        traces = (trace for path in config.traces for trace in read_jsonl(path))
        statuses = config.statuses or None
        rows = list(traces_to_rows(traces, subagents=config.subagents, statuses=statuses))
        context = Context(
            overview_frames=config.overview_frames, overview_max_pixels=config.overview_max_pixels
        )
        for path in config.paravt_parquet:
            rows += paravt_rows(
                read_paravt_parquet(path), video_root=config.video_root, context=context
            )
        parts += [to_dataset(rows)] if rows else []
    if not sum(len(part) for part in parts):
        raise ValueError("no SFT rows: pass --traces, --paravt_parquet or --dataset with data")
    return concatenate_datasets(parts) if len(parts) > 1 else parts[0]


def build_trainer(config: SFTRunConfig, dataset=None) -> SFTTrainer:
    """An ``SFTTrainer`` over the run's rows (or ``dataset``), with the frames collator."""
    if not config.model:
        raise ValueError("--model is required: a Qwen-VL checkpoint directory")
    if config.threads:
        torch.set_num_threads(config.threads)
    dataset = load_rows(config) if dataset is None else dataset
    if "images" in dataset.column_names:
        dataset = dataset.rename_column("images", "frames")  # see the module docstring
    tokenizer = AutoTokenizer.from_pretrained(config.model)
    image_processor = AutoImageProcessor.from_pretrained(config.model)
    dtype = getattr(torch, config.model_dtype)
    model = AutoModelForImageTextToText.from_pretrained(config.model, dtype=dtype)
    collator = FramesCollator(
        tokenizer,
        image_processor,
        max_length=config.max_length,
        assistant_only_loss=config.assistant_only_loss,
    )
    trainer = SFTTrainer(
        model=model,
        args=config.sft_config(),
        train_dataset=dataset,
        processing_class=tokenizer,
        data_collator=collator,
    )
    return trainer


def save_checkpoint(trainer: SFTTrainer, config: SFTRunConfig) -> Path:
    """Save model + tokenizer (the trainer) and the processor files, for serving."""
    out = Path(config.output_dir)
    trainer.save_model(str(out))
    if trainer.is_world_process_zero():
        trainer.data_collator.image_processor.save_pretrained(out)
        for name in PROCESSOR_FILES:  # keep the base's exact files (processor_class included)
            if (Path(config.model) / name).is_file():
                shutil.copy2(Path(config.model) / name, out / name)
        (out / "sft_run.json").write_text(json.dumps(asdict(config), indent=2) + "\n")
    return out


def loss_curve(trainer: SFTTrainer) -> list[tuple[int, float]]:
    """(step, training loss) at every logging step."""
    return [(e["step"], e["loss"]) for e in trainer.state.log_history if "loss" in e]


def train(config: SFTRunConfig, dataset=None) -> list[tuple[int, float]]:
    """Run SFT, save the checkpoint and its loss curve; return the curve."""
    trainer = build_trainer(config, dataset)
    trainer.train(resume_from_checkpoint=config.resume_from_checkpoint)
    out = save_checkpoint(trainer, config)
    curve = loss_curve(trainer)
    if trainer.is_world_process_zero():
        (out / "loss_curve.json").write_text(json.dumps(curve) + "\n")
    if curve:
        log.info("loss %.4f -> %.4f over %d steps", curve[0][1], curve[-1][1], curve[-1][0])
    return curve


def parse_args(argv: list[str] | None = None) -> SFTRunConfig:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_dataclass_flags(parser, SFTRunConfig, "run", underscores=True)
    return SFTRunConfig(**given(SFTRunConfig, parser.parse_args(argv)))


def main(argv: list[str] | None = None) -> None:
    """CLI: every ``SFTRunConfig`` field is a flag; ``--help`` prints their help text."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    train(parse_args(argv))


if __name__ == "__main__":
    main()
