"""paravt-nano's SFT: the oracle rows and note-to-answer rows in seeded, colour-balanced
batches under a background-noise curriculum, trained on the loss of ``training.nano.loss``,
after the two warm-ups of ``training.nano.warmup`` (copy circuits, then frame features).

- **Batches** hold one kind of row (similar lengths, little padding): a main-agent batch
  with probability ``main_share``, a batch of note-to-answer rows (``training.nano.notes``:
  the main agent's last turn in a short text-only context) with probability
  ``notes_share``, a verifier batch with probability ``verify_share``, else a sub-agent
  batch.
- **Loss.** Content tokens weigh ``content_weight`` times the others; the per-frame colour
  and shape target weighs ``aux_weight`` (``training.nano.loss``), the verifier's claim target
  ``claim_weight`` (``training.nano.claims``), the verifier's frame-time target
  ``time_weight`` (``training.nano.frame_times``). Each batch runs as
  groups of rows of similar length (``training.nano.groups``): the same loss and gradient,
  less padding.
- **Colour balance.** A sub-agent batch draws a window that shows a needle with probability
  ``needle_share`` (its colour uniform over the four), else an empty window.
- **Verdict balance.** A verifier batch draws its rows by what they hold
  (``verify_mix``): a right note of a needle, a right empty note, a wrong note, a note
  with nothing to check.
- **Curriculum.** The noise tiers unlock at the fractions ``unlock`` of the steps.

Rows are collated by ``training.collate.FramesCollator``, the path TRL's SFT uses, so ids
match serving; with ``sub_agent_base_spelling`` the sub-agent's targets keep the base's
spelling of a spaced second (``training.nano.spelling``).
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from training.collate import FramesCollator
from training.nano import resume, warmup
from training.nano.claims import ClaimTargets, claim_head
from training.nano.frame_times import FrameTimes
from training.nano.groups import ClaimCheck, backward_in_groups
from training.nano.loss import content_mask, frame_head, linear_patch_embed
from training.nano.sampler import AGENTS, Sampler
from training.nano.spelling import SubAgentSpelling

log = logging.getLogger(__name__)
#: What `save_checkpoint` writes itself, and the training log of the checkpoint it starts
#: from (a roles stage's base has one), which is not this checkpoint's.
_NOT_COPIED = {"model.safetensors", "config.json", "generation_config.json", "sft.jsonl"}


@dataclass(frozen=True)
class SFTSchedule:
    """How long and how hard SFT trains, and what each batch holds."""

    steps: int = 6000
    batch_rows: int = 8  # rows of a main-agent batch
    sub_batch_rows: int = 8  # rows of a sub-agent batch
    notes_batch_rows: int = 32  # rows of a note-to-answer batch (training.nano.notes)
    learning_rate: float = 2e-3
    warmup_steps: int = 50
    weight_decay: float = 0.01
    unlock: tuple[float, ...] = (0.0, 0.12, 0.3)  # fraction of the steps at which tier k opens
    main_share: float = 0.25  # share of the batches that are main-agent batches
    notes_share: float = 0.35  # share that are note-to-answer batches
    verify_share: float = 0.2  # share that are verifier batches (the rest: sub-agent)
    verify_batch_rows: int = 8
    rows_per_group: int = 8  # rows per forward pass, by length (training.nano.groups)
    verify_mix: tuple[float, ...] = (0.35, 0.15, 0.45, 0.05)  # over VERIFY_KINDS
    content_weight: float = 4.0  # weight of a content token against 1 for the others
    needle_share: float = 0.6  # share of sub-agent rows whose window shows a needle
    aux_weight: float = 0.5  # weight of the per-frame colour and shape target
    claim_weight: float = 0.0  # weight of the verifier's claim target (0: none)
    time_weight: float = 0.0  # weight of the verifier rows' frame-time target (0: none)
    sub_agent_base_spelling: bool = False  # training.nano.spelling (needs spaced seconds)
    copy_warmup_steps: int = 300  # training.nano.warmup: copy rows, before any SFT batch
    copy_warmup_rows: int = 32
    vision_warmup_steps: int = 600  # ... then single frames for the vision tower
    vision_warmup_frames: int = 64
    seed: int = 0
    threads: int = 2
    log_every: int = 20
    save_every: int = 0  # also save step-N/ checkpoints (for probing a run in progress)
    resume_every: int = 200  # write the resume point (training.nano.resume) every N steps


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


def learning_rate(peak: float, step: int, steps: int, warmup_steps: int) -> float:
    """The learning rate at `step` of `steps`: ramped up over `warmup_steps`, then a cosine
    from `peak` down to 0.

    >>> [round(learning_rate(1.0, s, 100, 10), 3) for s in (0, 9, 50, 99)]
    [0.1, 0.98, 0.5, 0.0]
    """
    progress = step / steps
    return peak * min(1.0, (step + 1) / warmup_steps) * (0.5 * (1 + math.cos(math.pi * progress)))


def train_sft(
    model_dir: str | Path,
    rows: Sequence[dict],
    out_dir: str | Path,
    schedule: SFTSchedule = SFTSchedule(),
) -> Path:
    """Train the checkpoint in `model_dir` on `rows`; save it to `out_dir`; log to sft.jsonl.

    A run killed after its first resume point goes on from there when called again with the
    same schedule and rows (``training.nano.resume``), warm-ups included."""
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    torch.set_num_threads(schedule.threads)
    torch.manual_seed(schedule.seed)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    processor = AutoImageProcessor.from_pretrained(model_dir)
    model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32)
    model.train()
    linear_patch_embed(model)
    head = frame_head(model)
    content = content_mask(tokenizer)
    collate = (SubAgentSpelling if schedule.sub_agent_base_spelling else FramesCollator)(
        tokenizer, processor
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    identity = resume.fingerprint(schedule, len(rows))
    state = resume.load(out, identity)
    warm = schedule.copy_warmup_steps or schedule.vision_warmup_steps
    warmed = (
        warm_up(model, head, tokenizer, processor, collate, rows, schedule)
        if warm and not state
        else None
    )
    sampler = Sampler(rows, schedule)
    heads = torch.nn.ModuleDict({"frame": head})  # training-only, saved with a resume point
    claims = None
    if schedule.claim_weight or schedule.time_weight:
        heads["claim"] = claim_head(model)
        times = None
        if schedule.time_weight:
            end = tokenizer.convert_tokens_to_ids("<|vision_end|>")
            times = FrameTimes(tokenizer, collate.image_token_id, end)
        claims = ClaimCheck(
            heads["claim"],
            ClaimTargets(tokenizer, content),
            schedule.claim_weight,
            times=times,
            time_weight=schedule.time_weight,
        )
    params = [*model.named_parameters(), *(("aux." + n, p) for n, p in heads.named_parameters())]
    decay = [p for n, p in params if p.ndim >= 2 and "embed" not in n]
    other = [p for n, p in params if not (p.ndim >= 2 and "embed" not in n)]
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": schedule.weight_decay},
            {"params": other, "weight_decay": 0.0},
        ],
        lr=schedule.learning_rate,
        betas=(0.9, 0.98),
    )
    extra = ("aux", "aux_acc", "claim", "claim_acc", "time", "time_acc")
    first, window = 0, {a: [] for a in (*AGENTS, *extra)}
    if state:
        resume.restore(state, model=model, heads=heads, optimizer=optimizer, sampler=sampler)
        first, window = state["step"], state["window"]
        resume.trim_log(out / "sft.jsonl", first)
        log.info("SFT resumes after step %d of %d", first, schedule.steps)
    began = time.perf_counter() - (state["elapsed"] if state else 0.0)
    with (out / "sft.jsonl").open("a" if state else "w") as log_file:
        if not state:
            log_file.write(json.dumps({"schedule": asdict(schedule), "rows": len(rows)}) + "\n")
            log_file.write(json.dumps({"warm_up": warmed}) + "\n")
        for step in range(first, schedule.steps):
            agent, chosen = sampler.batch(step)
            lr = learning_rate(schedule.learning_rate, step, schedule.steps, schedule.warmup_steps)
            for group in optimizer.param_groups:
                group["lr"] = lr
            optimizer.zero_grad(set_to_none=True)
            scored = backward_in_groups(
                model,
                head,
                collate,
                chosen,
                content=content,
                content_weight=schedule.content_weight,
                aux_weight=schedule.aux_weight,
                rows_per_group=schedule.rows_per_group,
                claims=claims,
            )
            torch.nn.utils.clip_grad_norm_([p for _, p in params], 1.0)
            optimizer.step()
            window[agent].append(scored.loss)
            if scored.aux is not None:
                window["aux"].append(scored.aux)
                window["aux_acc"].append(scored.accuracy)
            if scored.claim is not None:
                window["claim"].append(scored.claim)
                window["claim_acc"].append(scored.claim_accuracy)
            if scored.time is not None:
                window["time"].append(scored.time)
                window["time_acc"].append(scored.time_accuracy)
            if (step + 1) % schedule.log_every == 0:
                line = {"step": step + 1, "lr": lr, "tiers": sampler.open_tiers(step)}
                line |= {
                    f"loss_{k}" if k in AGENTS else k: round(sum(v) / len(v), 4)
                    for k, v in window.items()
                    if v
                }
                line["elapsed_s"] = round(time.perf_counter() - began, 1)
                log_file.write(json.dumps(line) + "\n")
                log_file.flush()
                log.info("sft %s", line)
                window = {k: [] for k in window}
            if schedule.save_every and (step + 1) % schedule.save_every == 0:
                save_checkpoint(model, model_dir, out / f"step-{step + 1}")
            if schedule.resume_every and (step + 1) % schedule.resume_every == 0:
                log_file.flush()
                resume.save(
                    out,
                    step=step + 1,
                    model=model,
                    heads=heads,
                    optimizer=optimizer,
                    sampler=sampler,
                    elapsed=time.perf_counter() - began,
                    window=window,
                    identity=identity,
                )
    model.eval()
    saved = save_checkpoint(model, model_dir, out)
    resume.clear(out)
    return saved


def warm_up(model, head, tokenizer, processor, collate, rows, schedule: SFTSchedule) -> dict:
    """The copy warm-up, then the vision warm-up; what each reached, with its seconds."""
    began = time.perf_counter()
    copies = warmup.copy_rows(tokenizer, 20 * schedule.copy_warmup_rows, seed=schedule.seed)
    copy_losses = warmup.warm_copy(
        model,
        collate,
        copies,
        steps=schedule.copy_warmup_steps,
        batch=schedule.copy_warmup_rows,
        lr=schedule.learning_rate,
        seed=schedule.seed,
    )
    middle = time.perf_counter()
    accuracy = warmup.warm_vision(
        model,
        head,
        processor,
        warmup.labelled_frames(rows),
        steps=schedule.vision_warmup_steps,
        batch=schedule.vision_warmup_frames,
        lr=schedule.learning_rate,
        seed=schedule.seed,
    )
    return {
        "copy_loss": copy_losses,
        "copy_s": round(middle - began, 1),
        "frame_accuracy": accuracy,
        "vision_s": round(time.perf_counter() - middle, 1),
    }


def save_checkpoint(model, model_dir: str | Path, out: Path) -> Path:
    """`model` into `out`, with the files of `model_dir` it did not write (tokenizer, chat
    template, processor configs, regime), unless `out` has them already."""
    model.save_pretrained(out)
    for path in Path(model_dir).iterdir():  # tokenizer, chat template, processor configs
        if path.is_file() and path.name not in _NOT_COPIED and not (out / path.name).exists():
            shutil.copy2(path, out / path.name)
    return out
