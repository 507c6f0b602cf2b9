"""The CLI's parser shape: the flags every command takes before or after its name, usage
errors in two lines, and subcommands that inherit the global flags."""

from __future__ import annotations

import argparse
import importlib.metadata
from pathlib import Path

from graphs.settings import DEFAULT_ENDPOINT


def version() -> str:
    try:
        return importlib.metadata.version("paravt-graph")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def global_arguments(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    """The flags every command takes, before or after its name. A command's copy has no
    defaults (argparse.SUPPRESS), so it only overrides what the top level parsed."""

    def default(value):
        return value if defaults else argparse.SUPPRESS

    group = parser.add_argument_group("global options (before or after the command)")
    group.add_argument(
        "--endpoint",
        action=_Repeatable,
        default=default(None),
        help=f"OpenAI-compatible base URL (env PARAVT_ENDPOINT; default {DEFAULT_ENDPOINT}); "
        "repeat it for replicas of one model: requests go to the least busy, and one that "
        "fails is tried on another",
    )
    group.add_argument(
        "--model", default=default(None), help="model name at the endpoint (default: the first)"
    )
    group.add_argument(
        "--home", type=Path, default=default(None), help="folder for the databases (.paravt)"
    )
    group.add_argument("--board-db", type=Path, default=default(None), help="board SQLite file")
    group.add_argument(
        "--checkpoint-db", type=Path, default=default(None), help="LangGraph checkpoint file"
    )
    group.add_argument(
        "--database-url",
        default=default(None),
        help="postgresql://... for the board and checkpoints, shared by many hosts "
        "(env PARAVT_DATABASE_URL; default: SQLite files in --home)",
    )
    group.add_argument("--env-file", default=default(".env"), help="settings file (.env)")
    group.add_argument("-v", "--verbose", action="store_true", default=default(False))
    group.add_argument(
        "--debug",
        action="store_true",
        default=default(False),
        help="show the traceback of an error, not only its message",
    )


class _Repeatable(argparse.Action):
    """One value, or a list once the flag is repeated (on one side of the command name: as
    with every global flag, those after the command replace those before it)."""

    def __call__(self, parser, namespace, values, option_string=None):
        before = getattr(namespace, self.dest, None)
        if before is None or before is argparse.SUPPRESS:
            setattr(namespace, self.dest, values)
        else:
            setattr(
                namespace, self.dest, [*(before if isinstance(before, list) else [before]), values]
            )


class Parser(argparse.ArgumentParser):
    """Usage errors in two lines (the message and where help is), not the whole usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n(`{self.prog} --help` lists the options)\n")


class Commands:
    """A subparsers action whose every command also takes the global flags."""

    def __init__(self, action: argparse._SubParsersAction, common: argparse.ArgumentParser):
        self.action, self.common = action, common

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        return self.action.add_parser(name, parents=[self.common], **kwargs)
