"""How well an untrained paravt-nano learns the main agent's lookup from text alone.

    python bench/nano_lookup_ablation.py --init build/nano/init --json bench/X.json
    python bench/nano_lookup_ablation.py --init build/nano/init --text-layers 6 ...
    python bench/nano_lookup_ablation.py --init build/nano/init --one-token-sightings ...

A quick stand-in for a full rebuild (about 25 minutes per 1,000 steps here, against 110 for a
rebuild) that isolates the step the shipped nano gets wrong: picking the right note when the
notes report two needles or more. From the untrained checkpoint of a rebuild's init stage, it
runs the recipe's copy warm-up, then note-to-answer rows alone (``training.nano.notes``, 32
a step, cosine learning rate from 2e-3). Every ``--every`` steps it scores, without
sampling, the rows of 400 unseen train-split plans whose notes report two needles or more:
is the argmax right at every content token of the last turn, by question kind, and after
which token was the first miss? Variants:

- ``--text-layers N``: fresh weights (seed 0) with N text layers instead of 4;
- ``--one-token-sightings``: each sighting " red circle" one token, notes opening
  "Seen a red circle from ..." so that the key "Seen: red" does not split it;
- ``--every-needle``: the training rows ask when each needle of a plan appears, not only the
  one the benchmark draws (more rows where the needle asked about sits between two others).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).parent))

import torch

from agents import benchmark
from training.collate import FramesCollator
from training.nano import model as nano_model
from training.nano import notes, warmup
from training.nano.loss import content_mask, token_weights, weighted_loss
from training.nano.oracle import sightings
from training.nano.train import learning_rate

TRAIN_PLANS = 20_000
HELD_OUT_PLANS = 400
SIGHTINGS = tuple(f" {c} {s}" for c in benchmark.COLOURS for s in benchmark.SHAPES)


def last_run(mask: torch.Tensor) -> torch.Tensor:
    """The last run of True in a 1-d bool mask (a row's last assistant turn among its
    trained tokens).

    >>> last_run(torch.tensor([True, True, False, True, True, False])).tolist()
    [False, False, False, True, True, False]
    """
    end = int(mask.nonzero().max()) + 1
    gaps = (~mask[:end]).nonzero()
    start = int(gaps.max()) + 1 if len(gaps) else 0
    kept = torch.zeros_like(mask)
    kept[start:end] = True
    return kept


def first_miss(model, batch: dict, content: torch.Tensor) -> int | None:
    """The input position whose next token is the first content token of the last assistant
    turn that the argmax gets wrong; None when it gets all of them right."""
    with torch.no_grad():
        logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits[0, :-1]
    targets = batch["labels"][0, 1:]
    keep = last_run(targets != -100) & content[targets.clamp(min=0)]
    wrong = (keep & (logits.argmax(-1) != targets)).nonzero()
    return int(wrong[0, 0]) if len(wrong) else None


def load(init: Path, *, text_layers: int | None, one_token_sightings: bool):
    """(tokenizer, processor, model) of the untrained checkpoint in `init`, as varied."""
    from transformers import (
        AddedToken,
        AutoImageProcessor,
        AutoModelForImageTextToText,
        AutoTokenizer,
        Qwen3VLForConditionalGeneration,
    )

    from serving.tiny_model import qwen3vl_config

    tokenizer = AutoTokenizer.from_pretrained(init)
    model = AutoModelForImageTextToText.from_pretrained(init, dtype=torch.float32)
    if text_layers is not None:
        config = qwen3vl_config(
            tokenizer, dataclasses.replace(nano_model.NANO, text_layers=text_layers)
        )
        for part in (config, config.text_config, config.vision_config):
            part.initializer_range = nano_model.INIT_STD
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            model = Qwen3VLForConditionalGeneration(config)
    if one_token_sightings:
        tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in SIGHTINGS])
        old = model.get_input_embeddings().weight.shape[0]
        model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
        with torch.no_grad():
            rows = model.get_input_embeddings().weight[old:]
            generator = torch.Generator().manual_seed(7)
            rows.copy_(torch.randn(rows.shape, generator=generator) * nano_model.INIT_STD)
    return tokenizer, AutoImageProcessor.from_pretrained(init), model.train()


def with_one_token_sightings(row: dict) -> dict:
    """`row` with each "Seen: red circle from" written "Seen a red circle from".

    >>> part = {"type": "text", "text": "Seen: red circle from 3 to 5 seconds. Seen: red circle."}
    >>> with_one_token_sightings({"messages": [{"content": [part]}]})["messages"][0]["content"]
    [{'type': 'text', 'text': 'Seen a red circle from 3 to 5 seconds. Seen: red circle.'}]
    """
    for message in row["messages"]:
        for part in message["content"]:
            if part["type"] == "text":
                part["text"] = re.sub(r"Seen: (\w+ \w+ from)", r"Seen a \1", part["text"])
    return row


def kind_of(row: dict) -> str:
    """The question kind of a note-to-answer row ("colour", "ground", ...), from its id."""
    return row["question_id"].rsplit("-", 1)[-1]


def several_sightings(row: dict) -> bool:
    """Whether the row's notes report two needles or more (a pick among notes)."""
    responses = row["messages"][1]["content"][0]["text"]
    return len(sightings(responses.split("</tool_response>"))) >= 2


def score(model, tokenizer, collate, rows, content) -> dict:
    """Rows right at every content token of their last turn, by kind ([right, rows]), and
    the counts of the token before each wrong row's first miss."""
    model.eval()
    right, after = {}, Counter()
    for row in rows:
        batch = collate([row])
        miss = first_miss(model, batch, content)
        counts = right.setdefault(kind_of(row), [0, 0])
        counts[0] += miss is None
        counts[1] += 1
        if miss is not None:
            after[tokenizer.decode(batch["input_ids"][0, miss : miss + 1])] += 1
    model.train()
    return {"right": right, "first_miss_after": dict(after.most_common())}


def run(args) -> dict:
    """Warm up, train on note-to-answer rows, and score the held-out rows (the JSON report)."""
    torch.set_num_threads(2)
    torch.manual_seed(0)
    tokenizer, processor, model = load(
        args.init, text_layers=args.text_layers, one_token_sightings=args.one_token_sightings
    )
    collate = FramesCollator(tokenizer, processor)
    began = time.time()
    copies = warmup.copy_rows(tokenizer, 20 * 32, seed=0)
    warmup.warm_copy(model, collate, copies, steps=args.warmup_steps, batch=32, lr=2e-3, seed=0)
    varied = with_one_token_sightings if args.one_token_sightings else (lambda row: row)
    first = benchmark.SPLIT_SEEDS["train"] + 1200  # past the rebuild's own train videos
    plans = range(first, first + args.train_plans)
    rows = [varied(r) for r in notes.note_rows(plans, every_needle_grounded=args.every_needle)]
    unseen = first + max(2 * TRAIN_PLANS, args.train_plans)  # never a trained plan
    held = [varied(r) for r in notes.note_rows(range(unseen, unseen + args.held_plans))]
    held = [row for row in held if several_sightings(row)]
    content = content_mask(tokenizer)
    if args.one_token_sightings:
        content[tokenizer.convert_tokens_to_ids(list(SIGHTINGS))] = True
    params = [p for n, p in model.named_parameters() if "visual" not in n]
    optimiser = torch.optim.AdamW(params, lr=2e-3, betas=(0.9, 0.98), weight_decay=0.01)
    rng, evals = random.Random(0), []
    for step in range(args.steps):
        for group in optimiser.param_groups:
            group["lr"] = learning_rate(2e-3, step, args.steps, 50)
        batch = collate([rng.choice(rows) for _ in range(32)])
        loss, _, _ = weighted_loss(model, batch, token_weights(batch["labels"], content, 4.0))
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimiser.step()
        if (step + 1) % args.every == 0 or step + 1 == args.steps:
            scored = score(model, tokenizer, collate, held, content)
            evals.append(
                {
                    "step": step + 1,
                    "loss": round(loss.item(), 4),
                    "seconds": round(time.time() - began),
                    **scored,
                }
            )
            print(json.dumps(evals[-1]), flush=True)
    return {
        "init": str(args.init),
        "text_layers": args.text_layers or nano_model.NANO.text_layers,
        "one_token_sightings": args.one_token_sightings,
        "every_needle": args.every_needle,
        "steps": args.steps,
        "held_out_rows": len(held),
        "evals": evals,
    }


def init_parser(description: str) -> argparse.ArgumentParser:
    """A parser with the options every trial from an untrained nano takes: --init, --json."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--init", type=Path, required=True, help="An untrained nano: a rebuild's init/ folder."
    )
    parser.add_argument("--json", type=Path, required=True)
    return parser


def require_init(init: Path) -> None:
    """Exit with what to do when `init` holds no checkpoint."""
    if not (init / "config.json").exists():
        raise SystemExit(
            f"{init}: no checkpoint there; run `python -m "
            "training.nano.rebuild --out DIR` to its init stage first"
        )


def main() -> int:
    parser = init_parser(__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument("--warmup-steps", type=int, default=300)
    parser.add_argument("--train-plans", type=int, default=TRAIN_PLANS)
    parser.add_argument("--held-plans", type=int, default=HELD_OUT_PLANS)
    parser.add_argument("--text-layers", type=int)
    parser.add_argument("--one-token-sightings", action="store_true")
    parser.add_argument(
        "--every-needle",
        action="store_true",
        help="Train on a grounding row about every needle of a plan.",
    )
    args = parser.parse_args()
    require_init(args.init)
    args.json.write_text(json.dumps(run(args), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
