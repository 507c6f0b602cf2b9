"""The board study: run several graph configurations over one task and write one report.

Configurations (a registry; pick any subset): a single agent without tools or board, two
agents on one board (a scanner writes, a checker answers), the ParaVT isolated sub-agents,
a shared board, a verified board, a verified board with the length gate, and majority
voting (N = 5 at temperature 0.7) as the compute-matched ensemble baseline, of single agents
and of shared-board runs. The report has the accuracy-cost table, the Pareto plot (vision
counted in the cost), and paired-bootstrap CIs of each configuration against the single agent.

The option ``note_noise=P`` (with ``note_noise_seed=S``, default 0) misreads a share P of the
sub-agents' sighting notes before they reach the board (``evals.note_noise``): the noise
reinforcement the verify gate is for. It is part of each run's spec (so of its folder's
hash), never passed to the task's loader, and named in the report, which is written to
``study-<task>-note_noise<P>/``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.client.completion import ChatModel
from evals import pareto
from evals.compare import compare_runs
from evals.note_noise import VERSION as NOISE_VERSION
from evals.note_noise import NoisyNotes, split_options
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
    options = dict(options or {})
    loader_options, noise, noise_seed = split_options(options)
    if noise:  # the seed and how draws are keyed are part of the spec too
        options.update(note_noise_seed=noise_seed, note_noise_version=NOISE_VERSION)
    loading = dataclasses.replace(task, load=functools.partial(_load, task.load, loader_options))
    folders: dict[str, Path] = {}
    for name in configs:
        config = STUDY_CONFIGS[name]
        context = dataclasses.replace(base, **config.context)
        spec = EvalSpec(
            task=task.name,
            data_dir=str(data_dir),
            model=model,
            context=dataclasses.asdict(context),
            options=options,
            votes=config.votes,
        )
        # each configuration gets its own draws, the same for all: the same sub-agent call
        # is misread alike in every configuration (a paired comparison)
        model_llm = NoisyNotes(llm, noise, seed=noise_seed) if noise else llm
        outcome = await evaluate(
            loading,
            spec,
            llm=model_llm,
            out_root=out_root,
            profile=profile,
            limit=limit,
            concurrency=concurrency,
        )
        folders[name] = outcome.folder
    noise_info = {"rate": noise, "seed": noise_seed} if noise else None
    return write_report(
        task, folders, out_root, profile=profile, resamples=resamples, noise=noise_info
    )


def _load(load, options: dict[str, Any], data_dir: Path, **_spec_options: Any):
    """The task's loader with the study's loader options (the spec's also name the noise)."""
    return load(data_dir, **options)


def write_report(
    task: Task,
    folders: dict[str, Path],
    out_root: Path,
    *,
    profile: str,
    resamples: int,
    noise: dict[str, Any] | None = None,
) -> Path:
    """report.md, pareto.png and study.json in `out_root/study-<task>/` (with note noise,
    `out_root/study-<task>-note_noise<rate>/`)."""
    suffix = f"-note_noise{noise['rate']:g}" if noise else ""
    folder = Path(out_root) / f"study-{task.name}{suffix}"
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
        (
            f"Note noise: each sub-agent note that states a sighting had one fact (its colour, "
            f"shape or time) misread with probability {noise['rate']:g} (seed {noise['seed']}) "
            "before it reached the board (`evals.note_noise`)."
            if noise
            else "No note noise: every note is the sub-agent's own."
        ),
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
            "note_noise": noise,
            "runs": {k: str(v) for k, v in folders.items()},
            "points": pareto.table(points),
            "comparisons": comparisons,
        },
    )
    return folder / "report.md"
