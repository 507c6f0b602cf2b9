"""`app.py eval ...`: run a task, re-score saved samples, compare two runs."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from agents.terminal_text import plain
from evals import pareto
from evals.compare import compare_runs, header_lines
from evals.lmms_layout import write_lmms_eval_files
from evals.merge import add_merge_command
from evals.records import SampleLog, reply_problem, write_json_atomic
from evals.results import score_records, summarize
from evals.runner import EvalRefused, evaluate, results_path
from evals.shards import Shard
from evals.spec import EvalSpec
from evals.study import run_study
from evals.study_configs import STUDY_CONFIGS
from evals.table1_cli import add_table1_command
from evals.tasks import TASKS, get_task
from graphs.context import Context, add_context_arguments, context_from_args, effective
from graphs.regime import protocol_refusal, served_regime
from graphs.runs import event_loop
from graphs.settings import Settings

console = Console(stderr=True)
MEDIA_DIR_HELP = (
    "a folder searched for the media first, then --data-dir: e.g. the videos lmms-eval "
    "extracted into $HF_HOME/<task>, when --data-dir is the HF snapshot of annotations"
)


def add_eval_commands(
    commands: argparse._SubParsersAction, parents: list[argparse.ArgumentParser] = ()
) -> None:
    """`eval` and its actions; `parents` hold flags every command takes (app.py's globals)."""
    parents = list(parents)
    evals = commands.add_parser("eval", help="batch evaluation over benchmarks", parents=parents)
    actions = evals.add_subparsers(required=True, metavar="ACTION")

    run = actions.add_parser(
        "run", help="evaluate the graph on a task (resumes if rerun)", parents=parents
    )
    run.add_argument("--task", required=True, choices=sorted(TASKS))
    run.add_argument("--data-dir", type=Path, required=True, help="the benchmark's files")
    run.add_argument("--media-dir", type=Path, help=MEDIA_DIR_HELP)
    run.add_argument("--out", type=Path, default=Path("runs"), help="results root (default runs/)")
    run.add_argument("--limit", type=_positive_int, help="only the first N samples")
    run.add_argument("--concurrency", type=_positive_int, default=4)
    run.add_argument("--profile", help="scorer profile (default: the task's own default)")
    run.add_argument(
        "--option",
        action="append",
        default=[],
        type=_key_value,
        metavar="KEY=VALUE",
        help="task loader option, e.g. split=test (repeat)",
    )
    run.add_argument("--skip-bad-records", action="store_true")
    run.add_argument("--skip-missing-media", action="store_true")
    run.add_argument(
        "--shard",
        type=_shard,
        metavar="I/N",
        help="run shard I of N (1-based; whole videos per shard) in its own folder; "
        "`eval merge` joins the N folders into the unsharded run",
    )
    add_context_arguments(run)
    run.set_defaults(handler=cmd_eval_run)

    rescore = actions.add_parser(
        "rescore", help="recompute metrics with another scorer profile", parents=parents
    )
    rescore.add_argument("run_dir", type=Path)
    rescore.add_argument("--profile", required=True)
    rescore.set_defaults(handler=cmd_eval_rescore)

    compare = actions.add_parser(
        "compare", help="paired comparison of two runs on shared items", parents=parents
    )
    compare.add_argument("run_a", type=Path)
    compare.add_argument("run_b", type=Path)
    compare.add_argument("--profile", help="scorer profile (default: the task's default)")
    compare.add_argument("--resamples", type=int, default=10_000)
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    compare.set_defaults(handler=cmd_eval_compare)

    study = actions.add_parser(
        "study", help="the board study: several configurations, a report", parents=parents
    )
    study.add_argument("--task", required=True, choices=sorted(TASKS))
    study.add_argument("--data-dir", type=Path, required=True)
    study.add_argument("--media-dir", type=Path, help=MEDIA_DIR_HELP)
    study.add_argument("--out", type=Path, default=Path("runs"))
    study.add_argument(
        "--configs",
        default=",".join(STUDY_CONFIGS),
        help=f"comma-separated, from {', '.join(STUDY_CONFIGS)}",
    )
    study.add_argument("--limit", type=_positive_int)
    study.add_argument("--concurrency", type=_positive_int, default=4)
    study.add_argument("--resamples", type=int, default=10_000)
    study.add_argument(
        "--option", action="append", default=[], type=_key_value, metavar="KEY=VALUE"
    )
    add_context_arguments(study)
    study.set_defaults(handler=cmd_eval_study)

    front = actions.add_parser(
        "pareto", help="accuracy against cost for runs, with the front", parents=parents
    )
    front.add_argument("runs", type=Path, nargs="+")
    front.add_argument("--out", type=Path, default=Path("pareto.png"))
    front.add_argument("--profile", help="scorer profile (default: each task's default)")
    front.set_defaults(handler=cmd_eval_pareto)
    add_merge_command(actions, parents)
    add_table1_command(actions, parents)


def cmd_eval_run(args: argparse.Namespace, settings: Settings) -> int:
    task = get_task(args.task)
    context = context_from_args(args, Context(**task.context))
    options = _loader_options(args)
    return event_loop.run(_eval_run(args, settings, task, context, options))


async def _eval_run(args, settings: Settings, task, context: Context, options) -> int:
    given = {f.name for f in fields(Context) if getattr(args, f.name, None) is not None}
    async with settings.chat_model() as llm:
        refused = protocol_refusal(context, given, await served_regime(llm))
        if refused:
            console.print(f"[red]not started:[/red] {refused}")
            return 2
        context = effective(context)  # the spec records the settings the run really has
        model = await llm.model_name()
        spec = EvalSpec(
            task=task.name,
            data_dir=str(args.data_dir.resolve()),
            model=model,
            context=asdict(context),
            options=options,
        )
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            TextColumn("score {task.fields[score]}  errors {task.fields[errors]}"),
            console=console,
        ) as progress:
            bar = progress.add_task(task.name, total=None, rate="", score="-", errors=0)
            errors = 0

            def on_start(total: int, done: int) -> None:
                progress.update(bar, total=total, completed=done)

            def on_sample(record: dict[str, Any], running: float | None) -> None:
                nonlocal errors
                errors += record["status"] != "ok"
                speed = progress.tasks[bar].speed
                progress.update(
                    bar,
                    advance=1,
                    errors=errors,
                    rate=f"{speed:.2f}/s" if speed else "",
                    score=f"{running:.3f}" if running is not None else "-",
                )

            try:
                outcome = await evaluate(
                    task,
                    spec,
                    llm=llm,
                    out_root=args.out,
                    profile=args.profile,
                    limit=args.limit,
                    concurrency=args.concurrency,
                    skip_bad_records=args.skip_bad_records,
                    skip_missing_media=args.skip_missing_media,
                    on_start=on_start,
                    on_sample=on_sample,
                    shard=args.shard,
                )
            except EvalRefused as exc:
                # the records' own text: shown plain, never as markup or terminal control
                console.print(f"[red]not started:[/red] {escape(plain(str(exc)))}")
                return 2
    profile = outcome.results["profile"]
    _print_results(outcome.results, results_path(outcome.folder, profile))
    return 0 if outcome.results["counts"]["errors"] == 0 else 1


def cmd_eval_rescore(args: argparse.Namespace, settings: Settings) -> int:
    spec = EvalSpec.from_json(json.loads((args.run_dir / "spec.json").read_text()))
    task = get_task(spec.task)
    if args.profile not in task.profiles:
        known = ", ".join(task.profiles)
        console.print(f"[red]error:[/red] {task.name} has profiles {known}")
        return 2
    records = score_records(task, list(SampleLog(args.run_dir, check=reply_problem)), args.profile)
    results = summarize(task, spec, records, args.profile)
    path = results_path(args.run_dir, args.profile)
    write_json_atomic(path, results)
    write_lmms_eval_files(args.run_dir, task, spec, records, results, args.profile)
    _print_results(results, path)
    return 0


def cmd_eval_compare(args: argparse.Namespace, settings: Settings) -> int:
    report = compare_runs(args.run_a, args.run_b, profile=args.profile, n_resamples=args.resamples)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("\n".join(header_lines(report)))
    table = Table(
        "metric",
        "A",
        "B",
        "B - A",
        "95% CI",
        "P(B>A)",
        title=f"{report['task']}: {report['n_items']} shared items, "
        f"{report['n_clusters']} clusters",
    )
    boot = report["bootstrap"]
    table.add_row(
        report["metric"],
        f"{boot['score_a']:.4f}",
        f"{boot['score_b']:.4f}",
        f"{boot['delta']:+.4f}",
        f"[{boot['ci_low']:+.4f}, {boot['ci_high']:+.4f}]",
        f"{boot['p_b_better']:.3f}",
    )
    Console().print(table)
    mc = report["mcnemar"]
    Console().print(
        f"McNemar exact: A right/B wrong {mc['b10']}, A wrong/B right {mc['b01']}, "
        f"p = {mc['p_value']:.4g}"
    )
    if report["categories"]:
        cats = Table("category", "value", "n", "A", "B", "B - A", title="per category")
        for row in report["categories"]:
            cats.add_row(
                row["field"],
                row["value"],
                str(row["n"]),
                f"{row['a']:.4f}",
                f"{row['b']:.4f}",
                f"{row['b'] - row['a']:+.4f}",
            )
        Console().print(cats)
    return 0


def cmd_eval_study(args: argparse.Namespace, settings: Settings) -> int:
    task = get_task(args.task)
    base = context_from_args(args, Context(**task.context))
    options = _loader_options(args)

    async def go() -> Path:
        async with settings.chat_model() as llm:
            return await run_study(
                task,
                data_dir=args.data_dir.resolve(),
                model=await llm.model_name(),
                llm=llm,
                out_root=args.out,
                configs=args.configs.split(","),
                base=base,
                options=options,
                limit=args.limit,
                concurrency=args.concurrency,
                resamples=args.resamples,
            )

    report = event_loop.run(go())
    console.print(report.read_text())
    console.print(f"report: {report}")
    return 0


def cmd_eval_pareto(args: argparse.Namespace, settings: Settings) -> int:
    from evals.pareto_plot import plot  # matplotlib loads only when a plot is drawn

    points = pareto.load_points(args.runs, args.profile)
    plot(points, args.out)
    console.print(pareto.markdown_table(points))
    console.print(f"plot: {args.out}")
    return 0


def _print_results(results: dict[str, Any], path: Path) -> None:
    table = Table("metric", "value", title=f"{results['task']} ({results['profile']})")
    for name, value in results["metrics"].items():
        table.add_row(name, f"{value:.4f}" if isinstance(value, float) else str(value))
    for name, stats in results["per_item"].items():
        table.add_row(
            f"{name} (per item)",
            f"{stats['mean']:.4f} ± {1.96 * stats['clustered_se']:.4f} (clustered)",
        )
    counts = results["counts"]
    table.add_row("scored / errors", f"{counts['scored']} / {counts['errors']}")
    Console().print(table)
    console.print(f"results: {path}")


def _loader_options(args: argparse.Namespace) -> dict[str, Any]:
    """--option KEY=VALUE pairs, plus media_dir from --media-dir (only when given, so runs
    without it keep their spec hash)."""
    options = dict(_parse_option(o) for o in args.option)
    if args.media_dir is not None:
        options["media_dir"] = str(args.media_dir.resolve())
    return options


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _shard(text: str) -> Shard:
    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _key_value(text: str) -> str:
    if "=" not in text or text.startswith("="):
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (e.g. split=test)")
    return text


def _parse_option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep:
        raise SystemExit(f"error: --option {text!r} is not KEY=VALUE")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value
