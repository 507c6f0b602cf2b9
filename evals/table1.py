"""Table 1 of the ParaVT paper, one command per row: each row's model on the release's seven
benchmark splits, with the release's locked settings (``paravt/eval/scripts/reproduce_*.sh``
and ``paravt/eval/configs/{withtool,notool}.yaml`` at EvolvingLMMs-Lab/ParaVT@cf55249).

    app.py eval table1 --row paravt-8b --data-root /data/paravt-bench

``--data-root`` holds one folder per benchmark, each in its published layout (the task's
loader docstring): ``videomme/`` (read twice: without and with subtitles), ``longvideobench/``,
``lvbench/``, ``mlvu/``, ``mmvu/``, ``charades/``. Every split runs as ``app.py eval run
--protocol release-eval`` with the row's prompt mode and channel, 64 overview frames, 3 tool
turns of at most 5 calls (1 turn for the single-pass rows) and 2,048 new tokens, and is
scored by the ``paravt`` profile (the driver's own ``_score``). The summary is the release's
``run_dataset`` summary: accuracy, or mIoU with R@0.3/0.5/0.7 for Charades-STA, plus
``avg_tool_calls`` and ``tool_usage_rate``, beside the paper's figure where it is known.

One departure: a sample that errors (a missing video, an endpoint that fails) is counted in
``errors`` and left out of the accuracy; the release counts it as a wrong answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.client.completion import ChatModel
from evals.records import SampleLog, write_json_atomic
from evals.runner import EvalOutcome, evaluate
from evals.spec import EvalSpec
from evals.tasks import get_task
from graphs.context import Context
from graphs.store.sqlite_board import Board


@dataclass(frozen=True)
class Row:
    """One Table 1 row: the model, and the prompt mode and video channel per split kind."""

    model: str
    mcq: tuple[str, str]  # (prompt mode, channel) of the six multiple-choice splits
    charades: tuple[str, str]  # and of Charades-STA
    max_turns: int = 3
    paper: Mapping[str, float] = field(default_factory=dict)  # the paper's figures (x100)


AGENTIC = ("agentic_general", "image_url")
REASONING = ("reasoning", "image_url")
REASONING_CHARADES = ("reasoning", "video_url")
ROWS: dict[str, Row] = {
    "paravt-8b": Row(
        "ParaVT/ParaVT-8B",
        AGENTIC,
        ("agentic_minimal", "video_url"),
        # the paper's abstract and project page (shared/reference/paravt-recipe.md)
        paper={"videomme_wsub": 69.4, "charades": 50.1},
    ),
    "qwen3-vl-8b": Row("Qwen/Qwen3-VL-8B-Instruct", AGENTIC, ("agentic_general", "video_url")),
    "qwen2.5-vl-7b": Row(
        "Qwen/Qwen2.5-VL-7B-Instruct",
        ("direct", "image_url"),
        ("direct", "video_url"),
        max_turns=1,
    ),
    "conan-7b": Row("RUBBISHLIKE/Conan-7B", AGENTIC, ("agentic_general", "video_url")),
    **{
        name: Row(model, REASONING, REASONING_CHARADES, max_turns=1)
        for name, model in (
            ("video-r1-7b", "Video-R1/Video-R1-7B"),
            ("videorft-7b", "QiWang98/VideoRFT"),
            ("videochat-r1-7b", "OpenGVLab/VideoChat-R1_7B"),
            ("video-thinker-7b", "ShijianW01/Video-Thinker-7B"),
            ("time-r1-7b", "Boshenxx/Time-R1-7B"),
            ("rewatch-r1", "zcccccz/ReWatch-R1"),
        )
    },
}
# (the release's dataset name, this project's task, its data folder, loader options)
SPLITS = (
    ("videomme", "videomme", "videomme", {}),
    ("videomme_wsub", "videomme", "videomme", {"subtitles": True}),
    ("longvideobench", "longvideobench", "longvideobench", {}),
    ("lvbench", "lvbench", "lvbench", {}),
    ("mlvu", "mlvu", "mlvu", {}),
    ("mmvu", "mmvu", "mmvu", {}),
    ("charades", "charades", "charades", {}),
)


def split_context(row: Row, dataset: str, channel: str | None = None) -> Context:
    """The release's locked settings for one split of one row (``channel`` overrides the
    row's, e.g. image_url for a server that cannot decode video)."""
    mode, row_channel = row.charades if dataset == "charades" else row.mcq
    return Context(
        protocol="release-eval",
        prompt_mode=mode,
        video_channel=channel or row_channel,
        overview_frames=64,
        max_turns=row.max_turns,
        max_parallel=5,
        max_new_tokens=2048,
    )


def release_summary(dataset: str, records: Sequence[Mapping[str, Any]], calls: Mapping[str, int]):
    """The release's ``run_dataset`` summary from this project's per-sample records;
    ``calls``: each scored sample's crop_video calls (from its trace)."""
    ok = [r for r in records if r["status"] == "ok"]
    n = max(len(ok), 1)
    used = [calls.get(r["trace_id"], 0) for r in ok]
    out: dict[str, Any] = {
        "dataset": dataset,
        "total": len(records),
        "errors": len(records) - len(ok),
        "avg_tool_calls": sum(used) / n,
        "tool_usage_rate": sum(1 for u in used if u > 0) / n,
    }
    if dataset == "charades":
        ious = [r["metrics"]["score"] for r in ok]
        out["mIoU"] = sum(ious) / n
        for t in (0.3, 0.5, 0.7):
            out[f"R@{t}"] = sum(1 for v in ious if v >= t) / n
    else:
        out["accuracy"] = sum(r["metrics"]["correct"] for r in ok) / n
        out["mcq_total"] = len(ok)
    return out


def _tool_calls(outcome: EvalOutcome) -> dict[str, int]:
    board = Board(outcome.folder / "board.sqlite")
    try:
        return {trace["run_id"]: len(trace.get("tool_calls", [])) for trace in board.traces()}
    finally:
        board.close()


async def run_row(
    name: str,
    *,
    data_root: Path,
    llm: ChatModel,
    model: str,
    out_root: Path,
    limit: int | None = None,
    concurrency: int = 4,
    channel: str | None = None,
    max_new_tokens: int | None = None,
    on_split: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every split of row `name`; writes ``<out_root>/<name>/summary.json`` and returns it."""
    row = ROWS[name]
    summaries = []
    for dataset, task_name, folder, options in SPLITS:
        if on_split:
            on_split(dataset)
        context = split_context(row, dataset, channel)
        if max_new_tokens:
            context = Context(**{**asdict(context), "max_new_tokens": max_new_tokens})
        spec = EvalSpec(
            task_name, str((data_root / folder).resolve()), model, asdict(context), dict(options)
        )
        outcome = await evaluate(
            get_task(task_name),
            spec,
            llm=llm,
            out_root=out_root / name,
            profile="paravt",
            limit=limit,
            concurrency=concurrency,
            skip_missing_media=True,
        )
        records = list(SampleLog(outcome.folder))
        summary = release_summary(dataset, records, _tool_calls(outcome))
        summary["run"] = str(outcome.folder)
        summary["settings"] = {
            "prompt_mode": context.prompt_mode,
            "video_channel": context.video_channel,
            "max_turns": context.max_turns,
            "max_new_tokens": context.max_new_tokens,
        }
        summaries.append(summary)
    result = {
        "row": name,
        "model": model,
        "row_model": row.model,
        "splits": summaries,
        "paper": dict(row.paper),
    }
    write_json_atomic(out_root / name / "summary.json", result)
    (out_root / name / "summary.md").write_text(table_text(result) + "\n")
    return result


def table_text(result: Mapping[str, Any]) -> str:
    """The summary as a Markdown table, the paper's figure beside each of ours."""
    lines = [
        f"Table 1 row {result['row']} ({result['model']})",
        "",
        "| split | metric | ours | paper | R@0.3 | R@0.5 | R@0.7 | avg_tool_calls | "
        "tool_usage_rate | samples | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in result["splits"]:
        metric = "mIoU" if "mIoU" in s else "accuracy"
        paper = result["paper"].get(s["dataset"])
        recall = [f"{100 * s[k]:.1f}" if k in s else "" for k in ("R@0.3", "R@0.5", "R@0.7")]
        lines.append(
            f"| {s['dataset']} | {metric} | {100 * s[metric]:.1f} | "
            f"{'' if paper is None else f'{paper:.1f}'} | {' | '.join(recall)} | "
            f"{s['avg_tool_calls']:.2f} | {s['tool_usage_rate']:.2f} | {s['total']} | "
            f"{s['errors']} |"
        )
    return "\n".join(lines)


def load_summary(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())
