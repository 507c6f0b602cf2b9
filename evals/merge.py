"""`app.py eval merge DIR...`: the shards of one run (`eval run --shard I/N`) as that run.

The merged folder is the one an unsharded run of the spec writes (``<task>-<spec hash>``,
under ``--out``, by default beside the first shard) and holds what it would: ``spec.json``,
``samples.jsonl`` (one line per sample, in document order), the results JSON scored in
document order, lmms-eval's files and a board with every shard's runs. ``merged.json``
names the shards it came from. Shards of different specs, a missing shard or an unfinished
one are refused, and nothing is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from evals.records import write_json_atomic, write_jsonl_atomic
from evals.results import score_records
from evals.runner import EvalOutcome, results_path, write_results
from evals.shards import read_shards
from evals.tasks import get_task
from graphs.settings import Settings
from graphs.store.sqlite_board import Board

console = Console(stderr=True)


def merge_shards(
    folders: list[Path], *, out_root: Path | None = None, profile: str | None = None
) -> EvalOutcome:
    """Write the run the shards in ``folders`` make up; returns it as `evaluate` would."""
    merged = read_shards(folders)
    task = get_task(merged.spec.task)
    profile = profile or task.default_profile
    task.profile(profile)  # an unknown name is a ValueError before anything is written
    folder = merged.spec.folder(out_root or folders[0].resolve().parent)
    write_json_atomic(folder / "spec.json", merged.spec.to_json())
    write_jsonl_atomic(folder / "samples.jsonl", merged.records)
    records = score_records(task, merged.records, profile)
    results = write_results(folder, task, merged.spec, records, profile, merged.load)
    board = Board(folder / "board.sqlite")
    try:
        for shard in merged.shards:
            if (Path(shard) / "board.sqlite").exists():
                source = Board(Path(shard) / "board.sqlite")
                board.absorb(source.dump())
                source.close()
    finally:
        board.close()
    write_json_atomic(folder / "merged.json", {"shards": merged.shards})
    return EvalOutcome(folder, results, ran=0, already_done=len(merged.records))


def add_merge_command(actions: argparse._SubParsersAction, parents: list) -> None:
    merge = actions.add_parser(
        "merge",
        help="join the folders of `eval run --shard I/N` into the unsharded run",
        parents=parents,
    )
    merge.add_argument("shards", type=Path, nargs="+", help="every shard's folder")
    merge.add_argument("--out", type=Path, help="results root (default: the shards' folder)")
    merge.add_argument("--profile", help="scorer profile (default: the task's own default)")
    merge.set_defaults(handler=cmd_eval_merge)


def cmd_eval_merge(args: argparse.Namespace, settings: Settings) -> int:
    outcome = merge_shards(args.shards, out_root=args.out, profile=args.profile)
    counts: dict[str, Any] = outcome.results["counts"]
    console.print(
        f"merged {len(args.shards)} shards: {counts['scored']} scored, {counts['errors']} "
        f"errors; results: {results_path(outcome.folder, outcome.results['profile'])}"
    )
    return 0 if counts["errors"] == 0 else 1
