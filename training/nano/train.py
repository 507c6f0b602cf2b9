"""paravt-nano's SFT: next-token loss on the oracle rows, with a background-noise curriculum.

Batches alternate between main-agent and sub-agent rows (similar lengths, little padding)
and are drawn (seeded) with the noise tiers unlocked one after another:
the calm tier alone first, then the calm and middle tiers, then all, so colour, shape and
"is a needle present" are learned before the texture gets in the way. Rows are collated by
``training.collate.FramesCollator``, the same path TRL's SFT uses, so ids match serving.
"""

from __future__ import annotations

import json
import logging
import math
import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from training.collate import FramesCollator

log = logging.getLogger(__name__)
_WEIGHTS = {"model.safetensors", "config.json", "generation_config.json"}


@dataclass(frozen=True)
class SFTSchedule:
    """How long and how hard SFT trains."""

    steps: int = 4000
    batch_rows: int = 8
    learning_rate: float = 2e-3
    warmup_steps: int = 50
    weight_decay: float = 0.01
    unlock: tuple[float, ...] = (0.0, 0.12, 0.3)  # fraction of the steps at which tier k opens
    seed: int = 0
    threads: int = 2
    log_every: int = 20
    save_every: int = 0  # also save step-N/ checkpoints (for probing a run in progress)


AGENTS = ("main", "sub")


def _agent(row: dict) -> str:
    return "sub" if row["agent"].startswith("sub:") else "main"


def row_mean_loss(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Next-token loss averaged within each row, then over rows: a five-token sub-agent note
    weighs as much as a 150-token main-agent conversation."""
    labels = batch["labels"]
    logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits[:, :-1]
    targets = labels[:, 1:]
    losses = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(),
        targets.reshape(-1),
        ignore_index=-100,
        reduction="none",
    ).view(targets.shape)
    counts = (targets != -100).sum(dim=1).clamp(min=1)
    return (losses.sum(dim=1) / counts).mean()


def dedupe(rows: Sequence[dict]) -> list[dict]:
    """Rows with the same messages and images (one sub-agent window run for several
    questions) kept once."""
    seen, out = set(), []
    for row in rows:
        key = (
            json.dumps(row["messages"], sort_keys=True),
            tuple(hash(image["bytes"]) for image in row["images"]),
        )
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out


def train_sft(
    model_dir: str | Path,
    rows: Sequence[dict],
    out_dir: str | Path,
    schedule: SFTSchedule = SFTSchedule(),
) -> Path:
    """Train the checkpoint in `model_dir` on `rows`; save it to `out_dir`; log to sft.jsonl."""
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    torch.set_num_threads(schedule.threads)
    torch.manual_seed(schedule.seed)
    rng = random.Random(schedule.seed)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    processor = AutoImageProcessor.from_pretrained(model_dir)
    model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32)
    model.train()
    collate = FramesCollator(tokenizer, processor)
    tiers = sorted({row["noise"] for row in rows})
    by_tier = {
        t: {a: [r for r in rows if r["noise"] == t and _agent(r) == a] for a in AGENTS}
        for t in tiers
    }
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embed" not in n]
    other = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "embed" not in n)]
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": schedule.weight_decay},
            {"params": other, "weight_decay": 0.0},
        ],
        lr=schedule.learning_rate,
        betas=(0.9, 0.98),
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "sft.jsonl"
    began, step, window = time.perf_counter(), 0, []
    with log_path.open("w") as log_file:
        log_file.write(json.dumps({"schedule": asdict(schedule), "rows": len(rows)}) + "\n")
        while True:
            progress = step / schedule.steps
            if progress >= 1.0:
                break
            open_tiers = [
                t for t, at in zip(tiers, schedule.unlock, strict=False) if progress >= at
            ]
            agent = AGENTS[step % len(AGENTS)]  # one agent per batch: similar lengths, less padding
            pool = [r for t in open_tiers for r in by_tier[t][agent]]
            batch = collate([rng.choice(pool) for _ in range(schedule.batch_rows)])
            lr = schedule.learning_rate * min(1.0, (step + 1) / schedule.warmup_steps)
            lr *= 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))
            for group in optimizer.param_groups:
                group["lr"] = lr
            loss = row_mean_loss(model, batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            step += 1
            window.append(loss.item())
            if step % schedule.log_every == 0:
                line = {
                    "step": step,
                    "loss": round(sum(window) / len(window), 4),
                    "lr": lr,
                    "tiers": open_tiers,
                    "elapsed_s": round(time.perf_counter() - began, 1),
                }
                log_file.write(json.dumps(line) + "\n")
                log_file.flush()
                log.info("sft %s", line)
                window = []
            if schedule.save_every and step % schedule.save_every == 0:
                _save(model, model_dir, out / f"step-{step}")
    model.eval()
    return _save(model, model_dir, out)


def _save(model, model_dir: str | Path, out: Path) -> Path:
    model.save_pretrained(out)
    for path in Path(model_dir).iterdir():  # tokenizer, chat template, processor configs
        if path.is_file() and path.name not in _WEIGHTS and not (out / path.name).exists():
            shutil.copy2(path, out / path.name)
    return out
