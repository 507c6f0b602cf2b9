"""`app.py board` and `app.py traces export`: what the board holds, shown and exported.

Everything shown comes from the board file: questions, answers and notes written by users,
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
from graphs.board import Board
from graphs.settings import Settings
from graphs.traces import write_jsonl

console = Console(stderr=True)


def add_board_commands(commands, parents: list[argparse.ArgumentParser] = ()) -> None:
    """`board` and `traces export`; `parents` hold flags every command takes."""
    board = commands.add_parser(
        "board", help="list runs, or show one run's notes", parents=list(parents)
    )
    board.add_argument("run_id", nargs="?")
    board.add_argument("--limit", type=int, default=20)
    board.set_defaults(handler=cmd_board)

    traces = commands.add_parser("traces", help="trace commands", parents=list(parents))
    actions = traces.add_subparsers(required=True, metavar="ACTION")
    export = actions.add_parser(
        "export", help="write stored traces as JSONL", parents=list(parents)
    )
    export.add_argument("--out", type=Path, required=True)
    export.add_argument("--run", action="append", dest="runs", help="only these run ids")
    export.set_defaults(handler=cmd_traces_export)


def _cell(value: object, limit: int | None = None) -> Text:
    text = one_line(value)
    return Text(text[:limit] if limit else text)


def cmd_board(args: argparse.Namespace, settings: Settings) -> int:
    board = Board(settings.board_path)
    if args.run_id is None:
        table = Table("run", "status", "answer", "question", title=str(settings.board_path))
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
        console.print(
            Text.assemble(("error:", "red"), f" no run {args.run_id!r} in {settings.board_path}")
        )
        return 2
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


def cmd_traces_export(args: argparse.Namespace, settings: Settings) -> int:
    board = Board(settings.board_path)
    wanted = set(args.runs or [])
    count = write_jsonl(
        (t for t in board.traces() if not wanted or t["run_id"] in wanted), args.out
    )
    console.print(Text(f"wrote {count} traces to {args.out}"))
    return 0
