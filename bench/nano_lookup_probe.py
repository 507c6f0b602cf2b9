"""Where paravt-nano's main agent loses the note it should follow: a teacher-forced probe.

    python bench/nano_lookup_probe.py     # the model and tools run of bench/nano_eval.json

Takes the tools run that a ``bench/nano_eval.py`` report names (``--eval``) and, for every
answer whose notes report two needles or more, feeds the model the last turn its own notes
imply (``training.nano.oracle``) after several contexts, with no sampling: is the argmax
right at every content token of that turn?

- ``full``: the conversation as the graph sent it (system prompt with tools, overview frames
  and question, first turn, notes);
- ``no_system``, ``no_overview`` (the question alone in the first user turn),
  ``no_first_turn``: one part left out;
- ``notes_only``: the question, then the notes, as the note-to-answer rows of SFT lay it out.

If the misses came from the long context, ``notes_only`` would be right where ``full`` is not.
It also measures, for the colour and shape questions, where the attention of the query token
(the fact line's one-token key: " the cross is", "Seen: red") goes in each layer: the best
head's mean weight on the value right after the same key in the notes (what an induction
head reads), on that key itself, and on the values after the other notes' keys. Writes
``bench/nano_lookup_probe.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

import torch  # noqa: E402
from nano_diagnosis import follows_notes, run_samples  # noqa: E402
from nano_eval import weights_digest  # noqa: E402

from agents import benchmark, prompts  # noqa: E402
from agents.protocol import render_turn  # noqa: E402
from training.collate import FramesCollator  # noqa: E402
from training.nano.loss import content_mask  # noqa: E402
from training.nano.oracle import SEEN, restated_key, sightings  # noqa: E402
from training.sft_data import trace_rows  # noqa: E402

VARIANTS = ("full", "no_system", "no_overview", "no_first_turn", "notes_only")


def contexts(messages: list[dict], images: list, last_turn: str) -> dict:
    """Each variant's (messages, images), all ending with `last_turn` as the assistant's. The
    first user turn ends with the question block, which alone is the note-to-answer rows'
    first turn."""
    system, user, first, notes = messages[:4]
    turn = {"role": "assistant", "content": [prompts.text_part(last_turn)]}
    question = {"role": "user", "content": [user["content"][-1]]}
    return {
        "full": ([system, user, first, notes, turn], images),
        "no_system": ([user, first, notes, turn], images),
        "no_overview": ([system, question, first, notes, turn], []),
        "no_first_turn": ([system, user, notes, turn], images),
        "notes_only": ([question, notes, turn], []),
    }


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


def last_turn_right(model, batch: dict, content: torch.Tensor) -> bool:
    """Whether the argmax is right at every content token of the last assistant turn."""
    return first_miss(model, batch, content) is None


def lookup_ids(tokenizer, item) -> tuple[int, set[int], set[int]] | None:
    """For a colour or shape question: (the key the fact line looks the value up by, every
    key of that kind, every value of that kind), as token ids; else None."""
    one = lambda text: tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))[0]  # noqa: E731
    named = item.question.split()
    if item.id.endswith("-colour"):
        shape = next(s for s in benchmark.SHAPES if s in named)
        keys = {s: one(f" {restated_key(s)}") for s in benchmark.SHAPES}
        return keys[shape], set(keys.values()), {one(f" {c}") for c in benchmark.COLOURS}
    if item.id.endswith("-shape"):
        colour = next(c for c in benchmark.COLOURS if c in named)
        keys = {c: one(f"{SEEN} {c}") for c in benchmark.COLOURS}
        return keys[colour], set(keys.values()), {one(f" {s}") for s in benchmark.SHAPES}
    return None


def lookup_positions(ids: list[int], key: int, keys: set[int], values: set[int]):
    """(the query: the last `key`; the same key before it, in the notes; the `values` right
    after the other `keys`).

    >>> lookup_positions([7, 1, 8, 2, 0, 7, 1, 0, 7], 7, {7, 8}, {1, 2})
    (8, 5, [3])
    """
    query = max(i for i, t in enumerate(ids) if t == key)
    note_key = max(i for i, t in enumerate(ids[:query]) if t == key)
    others = [i for i, t in enumerate(ids[:query]) if t in values and ids[i - 1] in keys - {key}]
    return query, note_key, others


def attention_to_values(model, batch: dict, key: int, keys: set[int], values: set[int]):
    """Per layer, the best head's weight from the fact line's key (its last occurrence) on
    the value right after the same key in the notes, on that key, and on the values after
    the other keys."""
    query, note_key, others = lookup_positions(batch["input_ids"][0].tolist(), key, keys, values)
    with torch.no_grad():
        weights = model(**{k: v for k, v in batch.items() if k != "labels"},
                        output_attentions=True).attentions  # fmt: skip
    rows = []
    for layer in weights:
        at = layer[0, :, query]  # heads x positions
        rows.append({
            "value_after_key": round(float(at[:, note_key + 1].max()), 3),
            "key": round(float(at[:, note_key].max()), 3),
            "other_values": round(float(at[:, others].sum(-1).max()), 3) if others else 0.0,
        })  # fmt: skip
    return rows


def probe(model_dir: Path, run: Path) -> dict:
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    collate = FramesCollator(tokenizer, AutoImageProcessor.from_pretrained(model_dir))
    model = AutoModelForImageTextToText.from_pretrained(
        model_dir, dtype=torch.float32, attn_implementation="eager"
    ).eval()
    content = content_mask(tokenizer)
    counts, attention = Counter(), []
    for _, item, trace, subs in run_samples(run):
        notes = [c["completion"]["text"].strip() for c in subs]
        implied, followed = follows_notes(item, notes, trace["answer"])
        rows = [r for r in trace_rows(trace) if r["agent"] == "main" and len(r["messages"]) == 5]
        if implied is None or len(sightings(notes)) < 2 or not rows:
            continue
        group = "followed" if followed else "not_followed"
        counts[f"{group}.runs"] += 1
        last_turn = render_turn(implied[0], answer=implied[1])
        variants = contexts(rows[0]["messages"], rows[0]["images"], last_turn)
        for name, (messages, images) in variants.items():
            batch = collate([{"messages": messages, "images": images}])
            counts[f"{group}.{name}"] += last_turn_right(model, batch, content)
            lookup = lookup_ids(tokenizer, item) if name == "full" else None
            if lookup is not None:
                attention.append(attention_to_values(model, batch, *lookup))
    by_variant = {
        name: {
            group: {"runs": counts[f"{group}.runs"], "last_turn_right": counts[f"{group}.{name}"]}
            for group in ("followed", "not_followed")
        }
        for name in VARIANTS
    }
    layers = [
        {k: round(sum(one[i][k] for one in attention) / len(attention), 3) for k in attention[0][i]}
        for i in range(len(attention[0]))
    ] if attention else []  # fmt: skip
    return {
        "model": str(model_dir),
        "run": str(run),
        "by_variant": by_variant,
        "colour_and_shape_questions": len(attention),
        "query_attention_by_layer": layers,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--eval",
        type=Path,
        default=Path(__file__).parent / "nano_eval.json",
        help="A bench/nano_eval.py report: its model and its tools run.",
    )
    parser.add_argument("--json", type=Path, default=Path(__file__).with_suffix(".json"))
    args = parser.parse_args()
    evaluated = json.loads(args.eval.read_text())
    model, run = Path(evaluated["model"]), Path(evaluated["tools"]["folder"])
    same_weights = weights_digest(model) == evaluated["weights_sha256_12"]
    if not (run / "board.sqlite").exists() or not same_weights:
        raise SystemExit(f"{args.eval}: its run folder or its weights are gone or changed; "
                         "run bench/nano_eval.py for this model again")  # fmt: skip
    report = probe(model, run)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
