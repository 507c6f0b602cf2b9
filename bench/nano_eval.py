"""paravt-nano on held-out data: the needle test split, the phrasing set, the verifier.

    python bench/nano_eval.py                      # the shipped assets/paravt-nano
    python bench/nano_eval.py --model build/nano/sft --videos 20 --json /tmp/probe.json
    python bench/nano_eval.py --parts phrasing verifier   # only these; other keys are kept

Serves the checkpoint with the local OpenAI-compatible server (``serving.server``, over real
HTTP, as a user would). Three parts, each written under its key of ``bench/nano_eval.json``:

- ``benchmark``: the evaluation runner on the test split (seeds no training step reads) with
  the benchmark's graph settings (4 overview frames), with parallel tools and with dispatch
  none: the metrics of both runs, the targets and whether each is met, and a diagnosis of
  the tools run (sub-agent notes against the oracle's; final answers against the run's own
  notes), under the keys ``tools``, ``none``, ``diagnosis`` and ``targets``;
- ``phrasing``: the held-out phrasing set (``nano_phrasings``), asked as a chat asks it,
  scored per kind with options and without (``nano_asking``);
- ``verifier``: the verify gate's accept rate on right notes and reject rate on misread ones
  on test-split windows (``nano_verifier``).
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
from dataclasses import asdict, replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from nano_asking import phrasing_report  # noqa: E402
from nano_verifier import verifier_report  # noqa: E402

from agents.client.llm import OpenAIChatModel  # noqa: E402
from bench.nano_diagnosis import diagnose  # noqa: E402
from evals.runner import evaluate  # noqa: E402
from evals.spec import EvalSpec  # noqa: E402
from evals.tasks import get_task  # noqa: E402
from graphs.context import Context  # noqa: E402
from serving.launch import local_server  # noqa: E402

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
    "verifier.accepts_right_notes": 0.9,
    "verifier.rejects_wrong_notes": 0.9,
}
PARTS = ("benchmark", "phrasing", "verifier")


async def run_arm(llm, task, data_dir: Path, out: Path, dispatch: str, videos: int, conc: int):
    context = replace(
        Context(**task.context), dispatch=dispatch, max_new_tokens=256, summary_max_tokens=48
    )
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


def verdict(report: dict) -> dict:
    """Each target whose part was measured, with its value and whether it is met."""
    measured = {}
    if "tools" in report:
        measured |= benchmark_measures(report["tools"], report["none"], report["diagnosis"])
    if "verifier" in report:
        v = report["verifier"]
        measured["verifier.accepts_right_notes"] = v["accepts_right_notes"]
        measured["verifier.rejects_wrong_notes"] = v["rejects_wrong_notes"]
    return {
        k: {"target": TARGETS[k], "measured": v, "met": v is not None and v >= TARGETS[k]}
        for k, v in measured.items()
    }


def benchmark_measures(tools: dict, none: dict, diagnosis: dict) -> dict:
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
    return measured


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
    report = {"model": str(args.model), "weights_sha256_12": work.name}
    with local_server(args.model, log_path=work / "server.log") as base_url:
        async with OpenAIChatModel(base_url, timeout=600.0) as llm:
            if "benchmark" in args.parts:
                conc = args.concurrency
                tools = await run_arm(llm, task, args.data, work, "parallel", args.videos, conc)
                none = await run_arm(llm, task, args.data, work, "none", args.videos, conc)
                report |= {
                    "diagnosis": diagnose(Path(tools["folder"])),
                    "videos": args.videos,
                    "samples_per_arm": tools["counts"]["samples"],
                    "tools": tools,
                    "none": none,
                }
            if "phrasing" in args.parts:
                report["phrasing"] = await phrasing_report(
                    llm, args.data, work / "phrasing", concurrency=args.concurrency
                )
            if "verifier" in args.parts:
                report["verifier"] = await verifier_report(
                    llm, args.data, concurrency=args.concurrency
                )
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "assets" / "paravt-nano")
    parser.add_argument("--videos", type=int, default=60, help="Test-split videos (3 items each).")
    parser.add_argument("--data", type=Path, default=ROOT / ".paravt" / "data")
    parser.add_argument("--work", type=Path, default=ROOT / ".paravt" / "nano-eval")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--json", type=Path, default=Path(__file__).with_suffix(".json"))
    parser.add_argument("--diagnose", type=Path, help="Only diagnose this finished tools run.")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.diagnose:
        print(json.dumps(diagnose(args.diagnose), indent=2))
        return 0
    report = asyncio.run(main_async(args))
    if set(args.parts) != set(PARTS) and args.json.exists():  # keep the parts not measured
        kept = json.loads(args.json.read_text())
        if kept.get("weights_sha256_12") != report["weights_sha256_12"]:
            parser.error(f"{args.json} is another checkpoint's record: pass another --json")
        report = kept | report
    report["targets"] = verdict(report)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    shown = {k: report[k] for k in ("targets", "diagnosis") if k in report}
    if "phrasing" in report:
        shown["phrasing"] = {k: v for k, v in report["phrasing"].items() if k != "answers"}
    print(json.dumps(shown, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
