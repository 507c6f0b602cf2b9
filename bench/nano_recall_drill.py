"""How fast an untrained paravt-nano learns keyed recall, the step its lookups need.

    python bench/nano_recall_drill.py --init build/nano/init --json bench/nano_recall_drill.json

The main agent's lookups copy the value written after a key (a needle's shape after
"Seen: red", its span after its sighting) from the one note whose key the question names.
That takes a keyed recall: find the key's earlier place, copy what follows it. This drill
isolates it. From the untrained checkpoint of a rebuild's init stage, it trains on rows
alone that list 3 to 8 pairs of a key (a word of the nano's vocabulary or one of its
``LOOKUP_KEYS``) and a value (a whole second, " 93"), then ask the keys again in a shuffled
order; the answer is each asked key with its value. Every ``--every`` steps it scores 128
unseen rows without sampling: token accuracy on the keys (a plain copy of the asked list),
on the values (the recall), and rows right at every token.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).parent))

import torch
from nano_lookup_ablation import init_parser, load, require_init

from agents import prompts
from training.collate import FramesCollator
from training.nano import model as nano_model
from training.nano import warmup
from training.nano.loss import weighted_loss


def drill_rows(keys: list[str], values: list[str], n: int, *, seed: int) -> list[dict]:
    """`n` recall rows: pairs of a key and a value, then the keys asked in a shuffled order.

    >>> row = drill_rows([" red", " blue", " cat"], [" 7", " 9"], 1, seed=0)[0]
    >>> ask, said = (m["content"][0]["text"] for m in row["messages"])
    >>> listed = ask.removeprefix("Pairs:").split("Ask:")[0].split()
    >>> pairs = dict(zip(listed[::2], listed[1::2]))
    >>> all(pairs[k] == v for k, v in zip(said.split()[::2], said.split()[1::2]))
    True
    """
    rng, rows = random.Random(seed), []
    for _ in range(n):
        asked = rng.sample(keys, rng.randint(3, min(8, len(keys))))
        value = {k: rng.choice(values) for k in asked}
        order = rng.sample(asked, len(asked))
        ask = "Pairs:" + "".join(k + value[k] for k in asked) + "\nAsk:" + "".join(order)
        said = "".join(k + value[k] for k in order)
        rows.append(
            {
                "messages": [
                    {"role": "user", "content": [prompts.text_part(ask)]},
                    {"role": "assistant", "content": [prompts.text_part(said)]},
                ],
                "images": [],
                "agent": "recall",
                "role": "main",
                "noise": 0.0,
            }
        )
    return rows


def answer_masks(labels: torch.Tensor, value_ids: torch.Tensor, other_ids: torch.Tensor):
    """(key positions, value positions) among the predicted tokens (``labels[:, 1:]``): a
    value is its whole-second token; `other_ids` (the lone space before a value, the turn's
    closing tokens) are neither."""
    known = labels != -100
    is_value = known & torch.isin(labels, value_ids)
    return known & ~is_value & ~torch.isin(labels, other_ids), is_value


def score(model, collate, rows: list[dict], value_ids: torch.Tensor) -> dict:
    """Argmax accuracy on the keys and on the values of the answers, and exact rows."""
    model.eval()
    with torch.no_grad():
        batch = collate(rows)
        inputs = {k: v for k, v in batch.items() if k != "labels"}
        guess = model(**inputs).logits[:, :-1].argmax(-1)
    model.train()
    labels = batch["labels"][:, 1:]
    known, right = labels != -100, guess == labels
    tokenizer = collate.tokenizer
    other = torch.tensor([tokenizer.convert_tokens_to_ids("Ġ"), *tokenizer.all_special_ids])
    is_key, is_value = answer_masks(labels, value_ids, other)
    rate = lambda mask: round(float((right & mask).sum() / mask.sum()), 4)  # noqa: E731
    exact = (right | ~known).all(-1).float().mean()
    return {"keys": rate(is_key), "values": rate(is_value), "exact_rows": round(float(exact), 4)}


def main() -> int:
    parser = init_parser(__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    args = parser.parse_args()
    require_init(args.init)
    torch.set_num_threads(2)
    torch.manual_seed(0)
    tokenizer, processor, model = load(args.init, text_layers=None, one_token_sightings=False)
    collate = FramesCollator(tokenizer, processor)
    words, numbers = warmup.copy_pool(tokenizer)
    keys = list(nano_model.LOOKUP_KEYS) + words
    value_ids = torch.tensor(tokenizer.convert_tokens_to_ids(list(nano_model.WHOLE_SECONDS)))
    train, held = drill_rows(keys, numbers, 20000, seed=1), drill_rows(keys, numbers, 128, seed=2)
    params = [p for n, p in model.named_parameters() if "visual" not in n]
    optimizer = torch.optim.AdamW(params, lr=args.learning_rate, betas=(0.9, 0.98))
    rng, began, points = random.Random(0), time.perf_counter(), []
    for step in range(args.steps):
        for group in optimizer.param_groups:
            group["lr"] = args.learning_rate * min(1.0, (step + 1) / 50)
        batch = collate([rng.choice(train) for _ in range(args.batch)])
        weights = (batch["labels"][:, 1:] != -100).float()
        loss, _, _ = weighted_loss(model, batch, weights)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        if (step + 1) % args.every == 0:
            point = {"step": step + 1, "loss": round(loss.item(), 4)}
            point |= score(model, collate, held, value_ids)
            point["elapsed_s"] = round(time.perf_counter() - began)
            print(json.dumps(point), flush=True)
            points.append(point)
    report = {
        "init": str(args.init),
        "batch": args.batch,
        "learning_rate": args.learning_rate,
        "held_out_rows": len(held),
        "points": points,
    }
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
