"""The verifier trained alone, with the claim target: does its verdict compare a note with the
frames, fact by fact?

    OMP_NUM_THREADS=2 python bench/nano_verifier_drill.py --data OUT/data \
        --json bench/nano_verifier_drill.json

`OUT/data` is a rebuild's data stage (``python -m training.nano.rebuild --out OUT --base
assets/paravt-nano-base --stop-after data``). The drill trains the roles stage's starting point
(the kept base, ``assets/paravt-nano-base``, its tokenizer extended by the verdicts and the
spaced seconds as the roles stage extends it: ``training.nano.extend``) on that stage's verifier
rows made on the sub-agents' windows (``training.nano.verifier_rows``) and nothing else:
batches drawn as SFT draws verifier batches (``SFTSchedule.verify_mix``), the roles stage's
learning rate under SFT's warm-up and cosine, SFT's loss in groups
(``training.nano.groups.backward_in_groups``) plus the claim target
(``training.nano.claims``) at ``--claim-weight``, read after decoder layer ``--layer``, a
fact that does not hold weighing ``--wrong-weight`` times one that does, and with
``--time-weight`` the frame-time target (``training.nano.frame_times``) read after decoder
layer ``--time-layer``, scored against the seconds' embeddings or a head of its own
(``--time-readout``), and with ``--lookup-weight`` the note-time lookup target
(``frame_times.NoteLookups``: at each of the note's times, what the frame it names shows),
read after ``--layer``. The rows of a fifth
of the windows (by a hash of the video and the window) are held out. It records the verdict's
accuracy on them (the argmax over the three verdicts) by what the note holds and by noise
tier, and the claim head's accuracy by kind of fact (a span's start and end times also
apart) and label, a wrong fact also by the note's case (a misread's apart from an invented
sighting's) (with ``--claim-weight 0``, the verdict alone), and the frame-time
target's accuracy at the visual tokens.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from agents import benchmark
from serving.checkpoints import NANO_BASE_DIR
from training.collate import FramesCollator
from training.nano import data, extend, frame_times, verifier_rows
from training.nano.claims import LAYER, ClaimTargets, claim_head, tap_layer
from training.nano.frame_times import (
    FrameTimes,
    NoteLookups,
    lookup_head,
    position_loss,
    time_head,
    time_readout,
)
from training.nano.groups import ClaimCheck, backward_in_groups
from training.nano.loss import content_mask, linear_patch_embed
from training.nano.model import SPACED_SECONDS, VERDICTS
from training.nano.rebuild import ROLES
from training.nano.sampler import Sampler, verify_kind
from training.nano.train import SFTSchedule, learning_rate


def held_out(row: dict) -> bool:
    return hashlib.sha1(json.dumps(row["window"]).encode()).digest()[0] % 5 == 0


def case(row: dict) -> str:
    """What the row's note holds: a verify_kind, a wrong note named by what is wrong with it
    (``verifier_rows``' ``wrong``: "invented", or "misread_" and the misread's kind)."""
    wrong = row.get("wrong")
    if wrong is None:
        return verify_kind(row)
    return wrong if wrong == "invented" else f"misread_{wrong}"


def fact(text: str) -> str:
    text = text.strip()
    if text.isdigit():
        return "time"
    if text.startswith("Seen:") or text in benchmark.COLOURS:
        return "colour"
    return "shape" if text.startswith("the ") or text in benchmark.SHAPES else text


def score(model, head, targets, collate, tokenizer, rows: list[dict], claims) -> dict:
    verdict_ids = tokenizer.convert_tokens_to_ids(list(VERDICTS))
    right, seen = Counter(), Counter()
    model.eval()
    with torch.no_grad():
        for k in range(0, len(rows), 8):
            chunk = rows[k : k + 8]
            encoded = [collate.encode_row(r) for r in chunk]
            batch = collate.pad(encoded)
            batch.pop("labels")
            with (
                tap_layer(model, claims.layer) as tap,
                tap_layer(model, claims.time_layer) as timed,
            ):
                logits = model(**batch).logits
            if claims.times and claims.time_weight:
                seconds = [claims.times(e.input_ids) for e in encoded]
                readout = time_readout(model, claims.times, claims.time_head)
                _, accuracy = position_loss(readout, timed.hidden, timed.hidden.shape[1], seconds)
                n = sum(len(s) for s in seconds)
                right["frame_time"], seen["frame_time"] = (
                    right["frame_time"] + accuracy * n,
                    seen["frame_time"] + n,
                )
            for i, row in enumerate(chunk):
                found = claims.lookups(row, encoded[i].input_ids) if claims.lookup_weight else []
                if found:
                    _, accuracy = position_loss(
                        claims.lookup_head.weight,
                        tap.hidden[i : i + 1],
                        tap.hidden.shape[1],
                        [found],
                    )
                    for key in ("lookup", f"lookup@{case(row)}"):
                        right[key] += accuracy * len(found)
                        seen[key] += len(found)
                at = encoded[i].loss_mask.index(1) - 1  # the verdict's logits
                got = VERDICTS[int(logits[i, at, verdict_ids].argmax())]
                ok = got == row["messages"][-1]["content"][0]["text"].strip()
                for key in (case(row), f"{case(row)}@noise={row['noise']}"):
                    right[key], seen[key] = right[key] + ok, seen[key] + 1
                times = 0  # a sighting's span: its first time is where it starts
                for position, label in targets(row, encoded[i].input_ids) if head else ():
                    said = tokenizer.decode([encoded[i].input_ids[position]])
                    kinds = [fact(said)]
                    if kinds == ["time"]:
                        kinds.append(("time_start", "time_end")[times % 2])
                        times += 1
                    agrees = (float(head(tap.hidden[i, position])) > 0) == bool(label)
                    for kind in kinds:
                        name = f"claim_{kind}_{'holds' if label else 'wrong'}"
                        # a wrong fact of a misread note apart from those of invented ones
                        for key in (name, f"{name}@{case(row)}") if not label else (name,):
                            right[key], seen[key] = right[key] + agrees, seen[key] + 1
    model.train()
    return {key: {"accuracy": round(right[key] / seen[key], 3), "n": seen[key]} for key in seen}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="A rebuild's OUT/data.")
    parser.add_argument("--work", type=Path, default=Path("/tmp/nano_verifier_drill"))
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--claim-weight", type=float, default=1.0)
    parser.add_argument("--wrong-weight", type=float, default=1.0)
    parser.add_argument("--layer", type=int, default=LAYER, help="The decoder layer it reads.")
    parser.add_argument("--time-weight", type=float, default=0.0)
    parser.add_argument(
        "--time-layer", type=int, default=frame_times.LAYER, help="The layer the time target reads."
    )
    parser.add_argument(
        "--time-readout",
        choices=("embedding", "head"),
        default="embedding",
        help="What the time target scores seconds against (frame_times.time_readout).",
    )
    parser.add_argument(
        "--lookup-weight",
        type=float,
        default=0.0,
        help="Weight of the note-time lookup target (frame_times.NoteLookups).",
    )
    parser.add_argument("--held-out-rows", type=int, default=1200)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    torch.set_num_threads(2)
    torch.manual_seed(0)
    began = time.perf_counter()
    traces = args.data / "traces.jsonl"
    if not traces.is_file():
        raise SystemExit(f"{traces} is missing: give --data a rebuild's data folder")
    rows = [r for r in data.sft_rows(traces) if "right_note" in r]
    train = [r for r in rows if not held_out(r)]
    test = [r for r in rows if held_out(r)]
    test = [test[i] for i in torch.randperm(len(test))[: args.held_out_rows].tolist()]
    init = extend.extend(NANO_BASE_DIR, args.work / "init", VERDICTS + SPACED_SECONDS)
    tokenizer = AutoTokenizer.from_pretrained(init)
    collate = FramesCollator(tokenizer, AutoImageProcessor.from_pretrained(init))
    model = AutoModelForImageTextToText.from_pretrained(init, dtype=torch.float32)
    model.train()
    linear_patch_embed(model)
    content = content_mask(tokenizer)
    head, targets = claim_head(model), ClaimTargets(tokenizer, content)
    times = FrameTimes(
        tokenizer, collate.image_token_id, tokenizer.convert_tokens_to_ids("<|vision_end|>")
    )
    clock = time_head(model) if args.time_readout == "head" else None
    reader = lookup_head(model) if args.lookup_weight else None
    claims = ClaimCheck(
        head,
        targets,
        args.claim_weight,
        wrong_weight=args.wrong_weight,
        layer=args.layer,
        times=times,
        time_weight=args.time_weight,
        time_layer=args.time_layer,
        time_head=clock,
        lookups=NoteLookups(times, targets),
        lookup_head=reader,
        lookup_weight=args.lookup_weight,
    )
    verifier_only = {"main_share": 0.0, "notes_share": 0.0, "verify_share": 1.0}
    schedule = replace(SFTSchedule(), **(ROLES | verifier_only), steps=args.steps)
    sampler = Sampler(train, schedule)
    heads = [h for h in (head, reader, clock) if h is not None]
    params = [*model.parameters(), *(p for h in heads for p in h.parameters())]
    optimizer = torch.optim.AdamW(params, lr=schedule.learning_rate, betas=(0.9, 0.98))
    loaded, log = time.perf_counter(), []
    for step in range(args.steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(
                schedule.learning_rate, step, schedule.steps, schedule.warmup_steps
            )
        optimizer.zero_grad(set_to_none=True)
        scored = backward_in_groups(
            model,
            None,  # no frame target: the verdict and the claims only
            collate,
            sampler.batch(step)[1],
            content=content,
            content_weight=schedule.content_weight,
            aux_weight=0.0,
            rows_per_group=schedule.rows_per_group,
            claims=claims if args.claim_weight or args.time_weight or args.lookup_weight else None,
        )
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        log.append((scored.loss, scored.claim, scored.time, scored.lookup))
        if (step + 1) % 100 == 0:
            window = log[-100:]
            line = {"step": step + 1, "loss": round(sum(a for a, *_ in window) / 100, 4)}
            for name, k in (("claim", 1), ("time", 2), ("lookup", 3)):
                if window[-1][k] is not None:
                    line[name] = round(sum(r[k] for r in window if r[k] is not None) / 100, 4)
            print(json.dumps(line), flush=True)
    trained = time.perf_counter()
    report = {
        "steps": args.steps,
        "claim_weight": args.claim_weight,
        "wrong_weight": args.wrong_weight,
        "layer": args.layer,
        **({"lookup_weight": args.lookup_weight} if args.lookup_weight else {}),
        **(
            {
                "time_weight": args.time_weight,
                "time_layer": args.time_layer,
                "time_readout": args.time_readout,
            }
            if args.time_weight
            else {}
        ),
        "misread_weights": verifier_rows.MISREAD_WEIGHTS,
        "train_rows": len(train),
        "held_out_rows": len(test),
        "seconds": {"rows": round(loaded - began, 1), "training": round(trained - loaded, 1)},
        "loss_by_100_steps": [
            round(sum(a for a, *_ in log[k : k + 100]) / 100, 4) for k in range(0, len(log), 100)
        ],
        "held_out": score(
            model, args.claim_weight and head, targets, collate, tokenizer, test, claims
        ),
    }
    text = json.dumps(report, indent=2) + "\n"
    if args.json:
        args.json.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
