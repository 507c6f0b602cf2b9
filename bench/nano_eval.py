"""paravt-nano on the held-out needle test split: with parallel tools, and with dispatch none.

    python bench/nano_eval.py                      # the shipped assets/paravt-nano
    python bench/nano_eval.py --model build/nano/sft --videos 20 --json /tmp/probe.json

Serves the checkpoint with the local OpenAI-compatible server (``serving.server``, over real
HTTP, as a user would) and runs the evaluation runner on the test split (seeds no training
step reads) with the benchmark's graph settings (4 overview frames). Writes the metrics of
both runs, the targets of the issue and whether each is met, and a diagnosis of the tools
run (sub-agent notes against the oracle's; final answers against the run's own notes) to
``bench/nano_eval.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import frame_store  # noqa: E402
from agents.llm import OpenAIChatModel  # noqa: E402
from agents.protocol import render_turn  # noqa: E402
from agents.scoring.accuracy import accuracy_reward  # noqa: E402
from agents.synthetic import read_manifest  # noqa: E402
from evals.runner import evaluate  # noqa: E402
from evals.spec import EvalSpec  # noqa: E402
from evals.tasks import get_task  # noqa: E402
from graphs.board import Board  # noqa: E402
from graphs.context import Context  # noqa: E402
from serving.launch import local_server  # noqa: E402
from training.nano.oracle import reasoning, sightings, window_note  # noqa: E402

#: The issue's targets, in its order: sub-agent notes, the main agent, end to end.
TARGETS = {
    "sub_agent.presence_right": 0.95,
    "sub_agent.colour_right_every_colour": 0.95,
    "sub_agent.shape_right": 0.85,
    "sub_agent.span_within_one_frame": 0.8,
    "note_follower_replay.mc_accuracy": 0.85,
    "main_agent.follows_its_notes": 0.95,
    "end_to_end.mc_accuracy": 0.8,
    "end_to_end.mc_gain_over_none": 0.4,
    "end_to_end.grounding_miou": 0.45,
    "end_to_end.open_f1": 0.8,
    "end_to_end.format_validity": 0.95,
}


async def run_arm(llm, task, data_dir: Path, out: Path, dispatch: str, videos: int, conc: int):
    context = replace(Context(**task.context), dispatch=dispatch, max_new_tokens=256,
                      summary_max_tokens=48)  # fmt: skip
    spec = EvalSpec(
        task=task.name,
        data_dir=str(data_dir),
        model=await llm.model_name(),
        context=asdict(context),
        options={"split": "test", "n_videos": videos},
    )
    began = time.perf_counter()
    outcome = await evaluate(task, spec, llm=llm, out_root=out, concurrency=conc)
    results = outcome.results
    return {
        "dispatch": dispatch,
        "metrics": results["metrics"],
        "by_question": results.get("by_category", {}).get("question"),
        "costs": results["costs"],
        "counts": results["counts"],
        "wall_s": round(time.perf_counter() - began, 1),
        "folder": str(outcome.folder),
    }


def _grid_index(grid: list[float], t: float) -> int:
    return min(range(len(grid)), key=lambda i: abs(grid[i] - t))


def note_counts(counts: Counter, expected: str, got: str, times: list[float], end: float) -> None:
    """Count one sub-agent note against the oracle's note for the same frames, needle by
    needle: colour found, exact colour and shape, shape, span exact and within one frame."""
    seen, said = sightings([expected]), sightings([got])
    counts["windows"] += 1
    counts["notes_exact"] += got == expected
    counts["presence_right"] += bool(seen) == bool(said)
    counts["false_needles"] += not seen and bool(said)
    if not seen:
        return
    counts["windows_with_needle"] += 1
    counts["colours_right"] += {c for c, _ in seen} == {c for c, _ in said}
    counts["shapes_right"] += {s for _, s in seen} == {s for _, s in said}
    counts["spans_right"] += list(seen.values()) == list(said.values())
    grid = [*times, end]
    for (colour, shape), (a, b) in seen.items():
        counts["needles"] += 1
        counts[f"needles_{colour}"] += 1
        named = {c: (s, span) for (c, s), span in said.items()}
        if colour not in named:
            continue
        counts[f"found_{colour}"] += 1
        their_shape, (a2, b2) = named[colour]
        counts["needle_shape_right"] += their_shape == shape
        counts["needle_span_exact"] += (a2, b2) == (a, b)
        counts["needle_span_within_one"] += (
            abs(_grid_index(grid, a) - _grid_index(grid, a2)) <= 1
            and abs(_grid_index(grid, b) - _grid_index(grid, b2)) <= 1
        )


def replay_score(item, notes: list[str]) -> float:
    """What a perfect note-follower scores on `item` from these notes: the oracle's reasoning
    over them, scored by the benchmark's rule (0 when they cannot answer it)."""
    implied = reasoning(item, sightings(notes))
    if implied is None:
        return 0.0
    target = (item.target["start"], item.target["end"]) if item.kind == "grounding" else item.answer
    reply = render_turn(implied[0], answer=implied[1])
    return accuracy_reward(reply, kind=item.kind, target=target) or 0.0


def follows_notes(item, notes: list[str], answer: str | None) -> tuple[tuple | None, bool]:
    """(the oracle's last turn the notes imply as (reasoning, answer), or None when they
    cannot answer; whether `answer` is that answer)."""
    implied = reasoning(item, sightings(notes))
    return implied, implied is not None and (answer or "").strip() == str(implied[1])


def answer_counts(counts: Counter, item, notes: list[str], answer: str | None) -> None:
    """Count whether the final answer is what the run's own notes imply, by question kind and
    by how many needles the notes report (the notes the main agent must pick among)."""
    _, follows = follows_notes(item, notes, answer)
    for group in ("", f"_{item.id.rsplit('-', 1)[-1]}", f"_sightings_{len(sightings(notes))}"):
        counts[f"after_notes{group}"] += 1
        counts[f"following{group}"] += follows


def run_samples(folder: Path) -> Iterator[tuple]:
    """Each sample of an eval run folder: (its video's truth, its item, its trace, the
    sub-agent calls of the trace)."""
    board = Board(folder / "board.sqlite")
    for line in (folder / "samples.jsonl").read_text().splitlines():
        record = json.loads(line)
        truth, items = read_manifest(Path(record["sample"]["media"]).with_suffix(".json"))
        item = next(i for i in items if i.question == record["sample"]["question"])
        trace = board.trace(record["trace_id"])
        subs = [c for c in trace["model_calls"] if c["agent"].startswith("sub:")]
        yield truth, item, trace, subs


def diagnose(folder: Path) -> dict:
    """Where a tools run goes wrong, agent by agent: each sub-agent note against the oracle's
    note for the same frames; a perfect note-follower replaying the run's own notes; and each
    final answer against what the run's own notes imply."""
    counts, replay = Counter(), {"multiple_choice": [], "grounding": [], "open_ended": []}
    for truth, item, trace, subs in run_samples(folder):
        windows = {f"sub:{n['turn']}:{n['index']}": n for n in trace["notes"]}
        notes = []
        for call in subs:
            ref = next(p for p in call["messages"][-1]["content"] if p.get("type") == "frames")
            frames = frame_store.encode_frames(
                ref["video"], tuple(ref["timestamps"]), ref["max_pixels"]
            )
            end = windows[call["agent"]]["end"]
            times = [f.timestamp for f in frames]
            got = call["completion"]["text"].strip()
            notes.append(got)
            note_counts(counts, window_note(truth, times, end), got, times, end)
        if notes:
            replay[item.kind].append(replay_score(item, notes))
            answer_counts(counts, item, notes, trace["answer"])
    rate = lambda a, b: round(counts[a] / counts[b], 4) if counts[b] else None  # noqa: E731
    colours = sorted(k.removeprefix("needles_") for k in counts if k.startswith("needles_"))
    groups = [k.removeprefix("after_notes_") for k in counts if k.startswith("after_notes_")]
    kinds = sorted(g for g in groups if not g.startswith("sightings_"))
    seen = sorted(g.removeprefix("sightings_") for g in groups if g.startswith("sightings_"))
    mean = lambda xs: round(sum(xs) / len(xs), 4) if xs else None  # noqa: E731
    return {
        "sub_agent": {
            "windows": counts["windows"],
            "note_exact": rate("notes_exact", "windows"),
            "presence_right": rate("presence_right", "windows"),
            "false_needle_rate": rate("false_needles", "windows"),
            "windows_with_needle": counts["windows_with_needle"],
            "colours_right_when_present": rate("colours_right", "windows_with_needle"),
            "shapes_right_when_present": rate("shapes_right", "windows_with_needle"),
            "spans_right_when_present": rate("spans_right", "windows_with_needle"),
            "needles_in_view": counts["needles"],
            "colour_right_by_colour": {c: rate(f"found_{c}", f"needles_{c}") for c in colours},
            "needles_by_colour": {c: counts[f"needles_{c}"] for c in colours},
            "shape_right": rate("needle_shape_right", "needles"),
            "span_exact": rate("needle_span_exact", "needles"),
            "span_within_one_frame": rate("needle_span_within_one", "needles"),
        },
        "note_follower_replay": {
            "mc_accuracy": mean(replay["multiple_choice"]),
            "grounding_miou": mean(replay["grounding"]),
            "open_f1": mean(replay["open_ended"]),
        },
        "main_agent": {
            "answers_after_notes": counts["after_notes"],
            "follows_its_notes": rate("following", "after_notes"),
            "follows_by_question": {k: rate(f"following_{k}", f"after_notes_{k}") for k in kinds},
            "answers_by_sightings": {n: counts[f"after_notes_sightings_{n}"] for n in seen},
            "follows_by_sightings": {
                n: rate(f"following_sightings_{n}", f"after_notes_sightings_{n}") for n in seen
            },
        },
    }


def verdict(tools: dict, none: dict, diagnosis: dict) -> dict:
    """Each target with its measured value and whether it is met."""
    m, n = tools["metrics"], none["metrics"]
    sub = diagnosis["sub_agent"]
    by_colour = [v for v in sub["colour_right_by_colour"].values() if v is not None]
    measured = {
        "sub_agent.presence_right": sub["presence_right"],
        "sub_agent.colour_right_every_colour": min(by_colour) if by_colour else None,
        "sub_agent.shape_right": sub["shape_right"],
        "sub_agent.span_within_one_frame": sub["span_within_one_frame"],
        "note_follower_replay.mc_accuracy": diagnosis["note_follower_replay"]["mc_accuracy"],
        "main_agent.follows_its_notes": diagnosis["main_agent"]["follows_its_notes"],
        "end_to_end.mc_accuracy": m.get("mc_accuracy"),
        "end_to_end.mc_gain_over_none": round(m.get("mc_accuracy", 0) - n.get("mc_accuracy", 0), 4),
        "end_to_end.grounding_miou": m.get("grounding_miou"),
        "end_to_end.open_f1": m.get("open_f1"),
        "end_to_end.format_validity": tools["costs"].get("format_validity"),
    }
    return {
        k: {"target": TARGETS[k], "measured": v, "met": v is not None and v >= TARGETS[k]}
        for k, v in measured.items()
    }


def weights_digest(model_dir: Path) -> str:
    """The first 12 hex digits of the sha256 of the checkpoint's weights."""
    digest = hashlib.sha256()
    for path in sorted(model_dir.glob("*.safetensors")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


async def main_async(args) -> dict:
    task = get_task("needle")
    # The served name is the same for every nano checkpoint, so the eval's resumable folder
    # is kept per weights: another checkpoint never resumes this one's finished runs.
    work = args.work / weights_digest(args.model)
    with local_server(args.model, log_path=work / "server.log") as base_url:
        async with OpenAIChatModel(base_url, timeout=600.0) as llm:
            tools = await run_arm(
                llm, task, args.data, work, "parallel", args.videos, args.concurrency
            )
            none = await run_arm(llm, task, args.data, work, "none", args.videos, args.concurrency)
    diagnosis = diagnose(Path(tools["folder"]))
    return {
        "model": str(args.model),
        "weights_sha256_12": work.name,
        "diagnosis": diagnosis,
        "videos": args.videos,
        "samples_per_arm": tools["counts"]["samples"],
        "tools": tools,
        "none": none,
        "targets": verdict(tools, none, diagnosis),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "assets" / "paravt-nano")
    parser.add_argument("--videos", type=int, default=60, help="Test-split videos (3 items each).")
    parser.add_argument("--data", type=Path, default=ROOT / ".paravt" / "data")
    parser.add_argument("--work", type=Path, default=ROOT / ".paravt" / "nano-eval")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--json", type=Path, default=Path(__file__).with_suffix(".json"))
    parser.add_argument("--diagnose", type=Path, help="Only diagnose this finished tools run.")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.diagnose:
        print(json.dumps(diagnose(args.diagnose), indent=2))
        return 0
    report = asyncio.run(main_async(args))
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: report[k] for k in ("targets", "diagnosis")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
