"""The board study on paravt-nano: every configuration, without and with note noise.

    python bench/nano_study.py                       # the shipped nano -> bench/nano_study.json
    python bench/nano_study.py --model build/nano/para_grpo/checkpoint --json /tmp/s.json
    python bench/nano_study.py --configs shared verified verified_length --verify-rereads 0 \
        --json bench/nano_study_rereads0.json --figure /tmp/rereads0.png

Runs ``evals.study.run_study`` on the needle test split (the first ``--videos`` videos, three
questions each) against the local server on the checkpoint, over real HTTP, twice: with
every note as the sub-agent wrote it, and with ``note_noise`` (a share of the sighting
notes misread before they reach the board: ``evals.note_noise``). Writes both tables (score,
the benchmark's metrics, tokens per sample with every image counted, and the tokens each
configuration adds over its base: ``single`` for the no-tool ones, ``shared`` for the
board ones) and draws them as ``docs/figures/nano-study.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from nano_eval import weights_digest  # noqa: E402

from agents.client.llm import OpenAIChatModel  # noqa: E402
from evals.note_noise import VERSION as NOISE_VERSION  # noqa: E402
from evals.study import STUDY_CONFIGS, run_study  # noqa: E402
from evals.tasks import get_task  # noqa: E402
from graphs.context import Context  # noqa: E402
from serving.launch import local_server  # noqa: E402

#: What each configuration's added tokens are counted against.
BASES = {
    "two_agent": "single",
    "vote5": "single",
    "isolated": "single",
    "shared": "single",
    "verified": "shared",
    "verified_length": "shared",
    "shared_vote5": "shared",
}
TOOL_USING = ("isolated", "shared", "verified", "verified_length", "shared_vote5")
#: The graph settings the record repeats from every run's spec.
RECORDED_SETTINGS = ("max_turns", "overview_frames", "verify_rereads")
#: The label of the table without note noise (the noisy one is "note noise 0.3").
CLEAN = "no note noise"


def rows(study_dir: Path) -> dict[str, dict]:
    """Per configuration: the score, the needle metrics and the cost, from a study folder."""
    study = json.loads((study_dir / "study.json").read_text())
    out = {}
    for name, run in study["runs"].items():
        results = json.loads((Path(run) / "results_official.json").read_text())
        per = results["costs"]["per_sample"]
        point = next(p for p in study["points"] if Path(run).name == p["run"])
        out[name] = {
            "score": results["metrics"]["mean_score"],
            **{k: results["metrics"].get(k) for k in ("mc_accuracy", "grounding_miou", "open_f1")},
            "tokens_per_sample": round(point["cost"], 1),
            "model_calls_per_sample": per["model_calls"],
            "samples": results["costs"]["samples"],
            "run": run,
        }
    for name, row in out.items():
        base = BASES.get(name)
        if base in out:
            extra = row["tokens_per_sample"] - out[base]["tokens_per_sample"]
            row["tokens_over_" + base] = round(extra, 1)
    return out


def style(label: str) -> tuple[str, str]:
    """The marker and colour of a table's points: circles without note noise, triangles with."""
    return ("o", "tab:blue") if label == CLEAN else ("^", "tab:red")


def label_groups(table: dict[str, dict]) -> list[tuple[list[str], float, float]]:
    """The table's configurations whose points lie on top of each other (score within 0.015,
    tokens within 15%), each group with one label at its first point, so no label prints over
    another (isolated and shared often score and cost alike).

    >>> label_groups({"a": {"tokens_per_sample": 100, "score": 0.5},
    ...               "b": {"tokens_per_sample": 110, "score": 0.51},
    ...               "c": {"tokens_per_sample": 300, "score": 0.51}})
    [(['a', 'b'], 100, 0.5), (['c'], 300, 0.51)]
    """
    groups: list[tuple[list[str], float, float]] = []
    for name, row in sorted(table.items(), key=lambda item: item[1]["tokens_per_sample"]):
        x, y = row["tokens_per_sample"], row["score"]
        near = [g for g in groups if abs(g[2] - y) < 0.015 and x < g[1] * 1.15]
        if near:
            near[0][0].append(name)
        else:
            groups.append(([name], x, y))
    return groups


def plot(tables: dict[str, dict], path: Path) -> Path:
    """Score against tokens per sample, each configuration without noise and with it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for label, table in tables.items():
        marker, colour = style(label)
        for row in table.values():
            ax.scatter(row["tokens_per_sample"], row["score"], marker=marker, color=colour)
        for names, x, y in label_groups(table):
            ax.annotate(
                ", ".join(names), (x, y), fontsize=7, xytext=(4, 2), textcoords="offset points"
            )
        ax.scatter([], [], marker=marker, color=colour, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("tokens per sample (every image encoding counted)")
    ax.set_ylabel("mean score (MC accuracy, grounding IoU, open F1)")
    ax.set_title("paravt-nano: the board study on the needle test split")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


async def main_async(args) -> dict:
    task = get_task("needle")
    base = replace(
        Context(**task.context),
        max_new_tokens=256,
        summary_max_tokens=48,
        verify_rereads=args.verify_rereads,
    )
    work = args.work / weights_digest(args.model)
    tables = {}
    with local_server(args.model, log_path=work / "server.log") as url:
        async with OpenAIChatModel(url, timeout=600.0) as llm:
            for noise in (0.0, args.noise):
                options = {"split": "test", "n_videos": args.videos}
                if noise:
                    options["note_noise"] = noise
                report = await run_study(
                    task,
                    data_dir=args.data.resolve(),
                    model=await llm.model_name(),
                    llm=llm,
                    out_root=work,
                    configs=args.configs,
                    base=base,
                    options=options,
                    concurrency=args.concurrency,
                    resamples=2000,
                )
                label = f"note noise {noise:g}" if noise else CLEAN
                tables[label] = rows(report.parent)
    return {
        "model": str(args.model),
        "weights_sha256_12": work.name,
        "videos": args.videos,
        "note_noise": args.noise,
        "note_noise_version": NOISE_VERSION,
        "context": {k: v for k, v in vars(base).items() if k in RECORDED_SETTINGS},
        "tool_using": [c for c in TOOL_USING if c in args.configs],
        "tables": tables,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "assets" / "paravt-nano")
    parser.add_argument("--videos", type=int, default=40, help="Test-split videos (3 items each).")
    parser.add_argument("--noise", type=float, default=0.3, help="The noisy study's note_noise.")
    parser.add_argument("--data", type=Path, default=ROOT / ".paravt" / "data")
    parser.add_argument("--work", type=Path, default=ROOT / ".paravt" / "nano-study")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--configs", nargs="+", choices=list(STUDY_CONFIGS), default=list(STUDY_CONFIGS)
    )
    parser.add_argument(
        "--verify-rereads",
        type=int,
        default=Context.verify_rereads,
        help="The verify gate's second looks (0: the gate withholds at once).",
    )
    parser.add_argument("--json", type=Path, default=Path(__file__).with_suffix(".json"))
    parser.add_argument("--figure", type=Path, default=ROOT / "docs" / "figures" / "nano-study.png")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    report = asyncio.run(main_async(args))
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    if args.figure:
        plot(report["tables"], args.figure)
    print(json.dumps(report["tables"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
