"""The board study: run several graph configurations over one task and write one report.

Configurations (a registry; pick any subset): a single agent without tools or board, two
agents on one board (a scanner writes, a checker answers), the ParaVT isolated sub-agents,
a shared board, a verified board, a verified board with the length gate, and majority
voting (N = 5 at temperature 0.7) as the compute-matched ensemble baseline. The report has
the accuracy-cost table, the Pareto plot (vision counted in the cost), and paired-bootstrap
CIs of each configuration against the single agent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.client.completion import ChatModel
from evals import pareto
from evals.compare import compare_runs
from evals.records import write_json_atomic
from evals.runner import evaluate
from evals.spec import EvalSpec
from evals.study_configs import BASELINE, STUDY_CONFIGS
from evals.tasks.base import Task
from graphs.context import Context

DOCUMENT_TASKS = ("chartqapro", "slidevqa", "vqaonline")


def study_profile(task: Task) -> str:
    """The document tasks' prompts ask for a "Final Answer:" line, which their official
    scripts would read as part of the answer: the study reads them with ``robust``."""
    return "robust" if task.name in DOCUMENT_TASKS else task.default_profile


async def run_study(
    task: Task,
    *,
    data_dir: Path,
    model: str,
    llm: ChatModel,
    out_root: Path,
    configs: Sequence[str] = tuple(STUDY_CONFIGS),
    base: Context | None = None,
    options: dict[str, Any] | None = None,
    limit: int | None = None,
    concurrency: int = 4,
    profile: str | None = None,
    resamples: int = 10_000,
) -> Path:
    """Evaluate every configuration (each resumable on its own) and write the report.
    ``profile`` None: :func:`study_profile`."""
    profile = profile or study_profile(task)
    unknown = [c for c in configs if c not in STUDY_CONFIGS]
    if unknown:
        raise ValueError(f"unknown study configurations {unknown}; known: {list(STUDY_CONFIGS)}")
    base = base or Context(**task.context)
    folders: dict[str, Path] = {}
    for name in configs:
        config = STUDY_CONFIGS[name]
        context = dataclasses.replace(base, **config.context)
        spec = EvalSpec(
            task=task.name,
            data_dir=str(data_dir),
            model=model,
            context=dataclasses.asdict(context),
            options=options or {},
            votes=config.votes,
        )
        outcome = await evaluate(
            task,
            spec,
            llm=llm,
            out_root=out_root,
            profile=profile,
            limit=limit,
            concurrency=concurrency,
        )
        folders[name] = outcome.folder
    return write_report(task, folders, out_root, profile=profile, resamples=resamples)


def write_report(
    task: Task, folders: dict[str, Path], out_root: Path, *, profile: str, resamples: int
) -> Path:
    """report.md, pareto.png and study.json in `out_root/study-<task>/`."""
    folder = Path(out_root) / f"study-{task.name}"
    folder.mkdir(parents=True, exist_ok=True)
    points = [
        dataclasses.replace(point, name=name)
        for name, point in zip(folders, pareto.load_points(folders.values(), profile), strict=True)
    ]
    from evals.pareto_plot import plot  # matplotlib loads only when a report is drawn

    plot(
        points,
        folder / "pareto.png",
        title=f"{task.name}: {task.primary_for(profile)} against cost",
    )
    comparisons = {}
    if BASELINE in folders:
        for name, run in folders.items():
            if name != BASELINE:
                report = compare_runs(
                    folders[BASELINE], run, profile=profile, n_resamples=resamples
                )
                comparisons[name] = {k: report[k] for k in ("n_items", "bootstrap", "mcnemar")}
    lines = [
        f"# Board study: {task.name}",
        "",
        f"Primary metric `{task.primary_for(profile)}` (profile `{profile}`); cost is tokens "
        "per sample with every image encoding counted.",
        "",
        pareto.markdown_table(points),
        "",
        "![Pareto front](pareto.png)",
        "",
    ]
    if comparisons:
        lines += [
            f"## Against `{BASELINE}` (paired cluster bootstrap, exact McNemar)",
            "",
            "| configuration | delta | 95% CI | P(better) | McNemar p |",
            "|---|---|---|---|---|",
        ]
        for name, c in comparisons.items():
            b = c["bootstrap"]
            lines.append(
                f"| {name} | {b['delta']:+.4f} | [{b['ci_low']:+.4f}, "
                f"{b['ci_high']:+.4f}] | {b['p_b_better']:.3f} | "
                f"{c['mcnemar']['p_value']:.3g} |"
            )
        lines.append("")
    lines += ["## Configurations", ""]
    lines += [
        f"- `{name}`: {STUDY_CONFIGS[name].description if name in STUDY_CONFIGS else ''} ({path})"
        for name, path in folders.items()
    ]
    (folder / "report.md").write_text("\n".join(lines) + "\n")
    write_json_atomic(
        folder / "study.json",
        {
            "task": task.name,
            "profile": profile,
            "runs": {k: str(v) for k, v in folders.items()},
            "points": pareto.table(points),
            "comparisons": comparisons,
        },
    )
    return folder / "report.md"
