"""What running an SFT batch in length groups (``training.nano.groups``) saves on the CPU.

    OMP_NUM_THREADS=2 python bench/nano_sft_groups.py --json bench/nano_sft_groups.json

Draws note-to-answer batches as the SFT's sampler does (32 rows uniformly from the rows of
train-split plans, ``training.nano.notes``), and runs each batch's forward and backward on
the shipped nano at once (one padded batch, as before) and in groups of at most 8 and 16
rows, in turn. It records the seconds per batch (median), the tokens each way runs
(padding included) against the tokens the rows hold, and how far the groups' loss and
gradient are from the single pass's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from agents import benchmark
from training.collate import FramesCollator
from training.nano import notes
from training.nano.groups import backward_in_groups, length_groups
from training.nano.loss import content_mask, frame_head, linear_patch_embed
from training.nano.rebuild import SHIPPED
from training.nano.train import SFTSchedule


def run(model, head, collate, content, rows, rows_per_group: int):
    model.zero_grad(set_to_none=True)
    began = time.perf_counter()
    scored = backward_in_groups(
        model,
        head,
        collate,
        rows,
        content=content,
        content_weight=SFTSchedule.content_weight,
        aux_weight=SFTSchedule.aux_weight,
        rows_per_group=rows_per_group,
    )
    seconds = time.perf_counter() - began
    grad = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    return seconds, scored.loss, grad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=Path(__file__).with_suffix(".json"))
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--plans", type=int, default=400)
    args = parser.parse_args()
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    torch.set_num_threads(2)
    tokenizer = AutoTokenizer.from_pretrained(SHIPPED)
    collate = FramesCollator(tokenizer, AutoImageProcessor.from_pretrained(SHIPPED))
    model = AutoModelForImageTextToText.from_pretrained(SHIPPED, dtype=torch.float32)
    model.train()
    linear_patch_embed(model)
    head, content = frame_head(model), content_mask(tokenizer)
    first = benchmark.SPLIT_SEEDS["train"] + 1200  # the rebuild's first plan seed
    pool = list(notes.note_rows(range(first, first + args.plans)))
    rng = random.Random(0)
    size, ways = SFTSchedule.notes_batch_rows, (SFTSchedule.notes_batch_rows, 16, 8)
    seconds = {w: [] for w in ways}
    tokens = {w: 0 for w in ways}
    held, worst_loss, worst_grad = 0, 0.0, 0.0
    for _ in range(args.batches):
        rows = [rng.choice(pool) for _ in range(size)]
        lengths = [len(collate.encode_row(r).input_ids) for r in rows]
        held += sum(lengths)
        reference = None
        for w in ways:
            tokens[w] += sum(len(g) * max(lengths[i] for i in g) for g in length_groups(lengths, w))
            spent, loss, grad = run(model, head, collate, content, rows, w)
            seconds[w].append(spent)
            if reference is None:
                reference = (loss, grad)
            else:
                worst_loss = max(worst_loss, abs(loss - reference[0]) / reference[0])
                gap = float((grad - reference[1]).norm() / reference[1].norm())
                worst_grad = max(worst_grad, gap)
    report = {
        "command": "OMP_NUM_THREADS=2 .venv/bin/python bench/nano_sft_groups.py "
        f"--batches {args.batches} --plans {args.plans}",
        "model": str(SHIPPED.relative_to(Path(__file__).resolve().parents[1])),
        "batch_rows": size,
        "batches": args.batches,
        "tokens_in_rows": held,
        "by_rows_per_group": {
            str(w): {
                "median_seconds": round(statistics.median(seconds[w]), 3),
                "tokens_run": tokens[w],
                "tokens_run_per_token_held": round(tokens[w] / held, 3),
            }
            for w in ways
        },
        "largest_relative_difference_from_one_pass": {"loss": worst_loss, "gradient": worst_grad},
    }
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
