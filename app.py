"""paravt: ask questions about long videos with parallel tool-calling agents (CLI)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib.metadata
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from agents import benchmark
from agents.completion import EndpointError
from agents.protocol import THINK_PREFIX
from agents.synthetic import QAItem, read_manifest
from agents.video import VideoError
from evals.cli import add_eval_commands
from graphs import event_loop
from graphs.builder import compile_graph
from graphs.cli import add_board_commands
from graphs.context import Context, add_context_arguments
from graphs.postgres.url import DatabaseError, redact
from graphs.presets import NANO
from graphs.regime import served_context
from graphs.report import RunDisplay, judge, result_record
from graphs.run import RunInProgress, RunResult, run_question
from graphs.settings import DEFAULT_ENDPOINT, Settings
from graphs.stores import open_board, open_checkpoints
from serving.cli import add_serve_command

DEMO_DIR = Path(__file__).parent / "assets" / "demo"
#: The demo's graph settings: paravt-nano's trained regime (graphs.presets).
DEMO_CONTEXT = NANO
console = Console(stderr=True)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if not args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        settings = Settings.load(
            env_file=args.env_file,
            endpoint=args.endpoint,
            model=args.model,
            home=args.home,
            board_db=args.board_db,
            checkpoint_db=args.checkpoint_db,
            database_url=args.database_url,
        )
        return args.handler(args, settings)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/yellow]")
        return 130
    except USER_ERRORS as exc:
        if args.debug:
            console.print_exception()
        else:
            console.print(f"[red]error:[/red] {escape(_message(exc, settings_url(args)))}")
        return 1 if isinstance(exc, EndpointError) else 2


class CLIError(Exception):
    """A user error the CLI found itself; its message says what to do."""


# One message each, the traceback under --debug; anything else is a bug and bubbles up.
USER_ERRORS = (
    CLIError, VideoError, EndpointError, RunInProgress, DatabaseError, OSError, ValueError,
)  # fmt: skip


def _message(exc: BaseException, url: str | None = None) -> str:
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return f"{exc.strerror}: {exc.filename}"
    text = str(exc) or type(exc).__name__
    return text.replace(url, redact(url)) if url else text  # a database password never shows


def settings_url(args: argparse.Namespace) -> str | None:
    return args.database_url or os.environ.get("PARAVT_DATABASE_URL") or None


def _version() -> str:
    try:
        return importlib.metadata.version("paravt-graph")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _global_arguments(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
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
            setattr(namespace, self.dest, [*(before if isinstance(before, list) else [before]),
                                           values])  # fmt: skip


class _Parser(argparse.ArgumentParser):
    """Usage errors in two lines (the message and where help is), not the whole usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n(`{self.prog} --help` lists the options)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="paravt", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    _global_arguments(parser, defaults=True)
    common = argparse.ArgumentParser(add_help=False)
    _global_arguments(common, defaults=False)
    commands = _Commands(parser.add_subparsers(required=True, metavar="COMMAND"), common)

    run = commands.add_parser("run", help="answer a question about a video")
    run.add_argument("--video", required=True)
    run.add_argument("--question", required=True)
    _add_question_arguments(run)
    run.set_defaults(handler=cmd_run)

    demo = commands.add_parser(
        "demo", help="ask the bundled needle video's question (starts paravt-nano if needed)"
    )
    demo.add_argument("--video", help="your own video instead of the bundled one (same settings)")
    demo.add_argument("--question", help="your own question (with --video)")
    _add_question_arguments(demo)
    demo.set_defaults(handler=cmd_demo)

    add_board_commands(commands.action, parents=[common])

    studio = commands.add_parser(
        "studio", help="open the graph in LangGraph Studio (langgraph dev)"
    )
    studio.add_argument(
        "--port", type=int, default=2025, help="dev server port (2024 is often taken)"
    )
    studio.set_defaults(handler=cmd_studio)

    add_eval_commands(commands.action, parents=[common])

    add_serve_command(commands.action, parents=[common])
    return parser


class _Commands:
    """A subparsers action whose every command also takes the global flags."""

    def __init__(self, action: argparse._SubParsersAction, common: argparse.ArgumentParser):
        self.action, self.common = action, common

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        return self.action.add_parser(name, parents=[self.common], **kwargs)


def _add_question_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--option",
        action="append",
        dest="options",
        default=[],
        help='a multiple-choice option such as "A. red" (repeat)',
    )
    parser.add_argument("--kind", choices=["multiple_choice", "grounding", "open_ended"])
    parser.add_argument("--thread-id", help="resume or name this run's checkpoint thread")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_context_arguments(parser)


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    display = RunDisplay(console)
    began = time.perf_counter()
    result = event_loop.run(
        _run(args, settings, args.video, args.question, args.options, on_update=display)
    )
    return _report(result, args, display, wall_s=time.perf_counter() - began)


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    """The bundled needle video's multiple-choice question (or --video/--question), with the
    benchmark's settings, on the endpoint or on a local paravt-nano server."""
    item, prompt = None, None
    if args.video:
        if not args.question:
            console.print("[red]error:[/red] --video needs --question")
            return 2
        video, question, options = args.video, args.question, args.options
    else:
        demo, items = read_manifest(DEMO_DIR / "needle.json")
        item = next(i for i in items if i.kind == "multiple_choice")
        video, question, options = demo.path, item.question, item.options
        args.kind, prompt = item.kind, benchmark.prompt_text(item)
        console.print(
            f"[bold]demo[/bold] {escape(os.path.relpath(video))}: {demo.duration:g} s at "
            f"{demo.fps:g} fps, {demo.width}x{demo.height}, seed {demo.seed}\n"
            f"  {escape(question)}  {'  '.join(options)}  (expected {item.answer})"
        )
    display = RunDisplay(console)
    with _endpoint(settings) as endpoint:
        settings = dataclasses.replace(settings, endpoint=endpoint)
        began = time.perf_counter()
        result = event_loop.run(
            _run(args, settings, video, question, options, DEMO_CONTEXT, prompt, display)
        )
    return _report(result, args, display, wall_s=time.perf_counter() - began, item=item)


@contextlib.contextmanager
def _endpoint(settings: Settings) -> Iterator[str]:
    """The configured endpoint if it answers, else a local paravt-nano server for the block."""
    from serving.checkpoints import default_checkpoint
    from serving.launch import endpoint_ready, local_server

    if endpoint_ready(settings.endpoint):
        yield settings.endpoint
        return
    if settings.endpoint != DEFAULT_ENDPOINT:
        raise CLIError(
            f"no OpenAI-compatible server answers at {settings.endpoint}. Start one there "
            "(`app.py serve --port PORT` serves paravt-nano on the CPU), or leave out "
            "--endpoint and PARAVT_ENDPOINT: demo then starts paravt-nano by itself."
        )
    nano = default_checkpoint()
    model = os.path.relpath(nano) if nano else "the untrained tiny model (no paravt-nano)"
    console.print(f"no server at {settings.endpoint}: starting the local CPU server on {model}")
    with local_server(log_path=settings.home / "server.log") as url:
        console.print(f"local server ready at {url}")
        yield url


async def _run(
    args,
    settings: Settings,
    video: str,
    question: str,
    options,
    base: Context | None = None,
    prompt: str | None = None,
    on_update=None,
) -> RunResult:
    context = await served_context(args, base or Context(), settings.endpoint)
    board = open_board(settings)
    try:
        async with (
            settings.chat_model() as llm,
            open_checkpoints(settings) as saver,
        ):
            # the client's once-per-invocation questions go out while the graph compiles
            warm = asyncio.create_task(llm.warm_up(THINK_PREFIX if context.think_prefix else None))
            graph = compile_graph(llm, board, checkpointer=saver, media_roots=settings.roots)
            await warm
            return await run_question(
                graph,
                board,
                video_path=video,
                question=question,
                options=options,
                kind=args.kind,
                prompt=prompt,
                context=context,
                thread_id=args.thread_id,
                on_update=on_update,
            )
    finally:
        board.close()


def _report(
    result: RunResult,
    args: argparse.Namespace,
    display: RunDisplay,
    *,
    wall_s: float,
    item: QAItem | None = None,
) -> int:
    expected = item.answer if item else None
    correct = judge(result, item) if item else None
    display.summary(result, wall_s=wall_s, expected=expected, correct=correct)
    if args.json:
        record = result_record(result, wall_s=wall_s, expected=expected, correct=correct)
        print(json.dumps(record))
    return 1 if result.status == "failed" else 0


def cmd_studio(args: argparse.Namespace, settings: Settings) -> int:
    """Start `langgraph dev` offline: no analytics, no version check, no tracing upload. With
    a database URL the board and the server's checkpoints go to it (langgraph.postgres.json)."""
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
        "PARAVT_ENDPOINT": ",".join(settings.endpoints),
        "PARAVT_HOME": str(settings.home),
    }
    config = "langgraph.json"
    if settings.database_url:
        env["PARAVT_DATABASE_URL"] = settings.database_url
        config = "langgraph.postgres.json"
    langgraph = Path(sys.executable).with_name("langgraph")
    command = [
        str(langgraph),
        "dev",
        "--no-browser",
        "--port",
        str(args.port),
        "--config",
        str(Path(__file__).parent / config),
    ]
    return subprocess.call(command, env=env, cwd=Path(__file__).parent)


if __name__ == "__main__":
    sys.exit(main())
