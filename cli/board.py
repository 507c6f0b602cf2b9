"""`app.py board ...` and `app.py traces export`: what the board holds, shown, exported and
moved.

Everything shown comes from the board: questions, answers and notes written by users,
models and servers. It is shown as plain text (`agents.terminal_text`), never as markup or
terminal control.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agents.terminal_text import one_line
from graphs.runs import event_loop
from graphs.runs.traces import write_jsonl
from graphs.settings import Settings
from graphs.store.postgres.url import check_url, redact
from graphs.store.stores import board_location, open_board

console = Console(stderr=True)


class BoardUsage(ValueError):
    """A board command given the wrong arguments; the message says which."""


def add_board_commands(
    commands: argparse._SubParsersAction, parents: list[argparse.ArgumentParser] = ()
) -> None:
    """`board` (with `board migrate --to URL`) and `traces export`; `parents` hold flags
    every command takes (app.py's globals)."""
    parents = list(parents)
    board = commands.add_parser(
        "board",
        parents=parents,
        help="list runs, show one run's notes, or `board migrate --to URL` (SQLite to PostgreSQL)",
    )
    board.add_argument("run_id", nargs="?", help="a run id, or `migrate`")
    board.add_argument("--limit", type=int, default=20)
    board.add_argument(
        "--to",
        metavar="URL",
        help="with `migrate`: the postgresql:// URL to copy the home's board and checkpoints to",
    )
    board.set_defaults(handler=cmd_board)

    traces = commands.add_parser("traces", help="trace commands", parents=parents)
    actions = traces.add_subparsers(required=True, metavar="ACTION")
    export = actions.add_parser("export", help="write stored traces as JSONL", parents=parents)
    export.add_argument("--out", type=Path, required=True)
    export.add_argument("--run", action="append", dest="runs", help="only these run ids")
    export.set_defaults(handler=cmd_traces_export)


def cmd_board(args: argparse.Namespace, settings: Settings) -> int:
    if args.run_id == "migrate":
        return cmd_board_migrate(args, settings)
    if args.to:
        raise BoardUsage("--to goes with `board migrate` (app.py board migrate --to URL)")
    board = open_board(settings)
    try:
        return _show(board, args, board_location(settings))
    finally:
        board.close()


def _cell(value: object, limit: int | None = None) -> Text:
    text = one_line(value)
    return Text(text[:limit] if limit else text)


def _show(board, args: argparse.Namespace, where: str) -> int:
    if args.run_id is None:
        table = Table("run", "status", "answer", "question", title=Text(where))
        for run in board.runs(limit=args.limit):
            table.add_row(
                _cell(run["run_id"]),
                _cell(run["status"]),
                _cell(run["answer"]),
                _cell(run["question"], 60),
            )
        Console().print(table)
        return 0
    run = board.run(args.run_id)
    if run is None:
        raise BoardUsage(f"no run {args.run_id!r} in {where}")
    table = Table(
        "note",
        "window (s)",
        "verdict",
        "tokens",
        "content",
        title=Text(f"run {args.run_id}: {run['status']}, answer {one_line(repr(run['answer']))}"),
    )
    for note in board.notes(args.run_id):
        table.add_row(
            _cell(note.key),
            f"{note.start:.1f}-{note.end:.1f}",
            _cell(note.verdict),
            str(note.prompt_tokens + note.completion_tokens),
            _cell(note.content, 120),
        )
    Console().print(table)
    return 0


def cmd_board_migrate(args: argparse.Namespace, settings: Settings) -> int:
    """Copy the home's SQLite board and checkpoints to the database at --to."""
    if not args.to:
        raise BoardUsage("board migrate needs --to postgresql://USER:PASSWORD@HOST/DATABASE")
    url = check_url(args.to)
    from graphs.store.postgres.migrate import migrate_home
    from graphs.store.postgres.pool import check_reachable

    if not settings.board_path.exists():
        raise FileNotFoundError(2, "no board to migrate", str(settings.board_path))
    check_reachable(url)

    console.print(f"copying {settings.board_path} and {settings.checkpoint_path} to {redact(url)}")
    migration = event_loop.run(migrate_home(settings.board_path, settings.checkpoint_path, url))
    console.print(f"copied {migration.summary()} (the rest were there already)")
    console.print(f"use it with: export PARAVT_DATABASE_URL='{redact(url)}' (your password)")
    return 0


def cmd_traces_export(args: argparse.Namespace, settings: Settings) -> int:
    board = open_board(settings)
    wanted = set(args.runs or [])
    try:
        traces = (t for t in board.traces() if not wanted or t["run_id"] in wanted)
        count = write_jsonl(traces, args.out)
    finally:
        board.close()
    console.print(Text(f"wrote {count} traces to {args.out}"))
    return 0
