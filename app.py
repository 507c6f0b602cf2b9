"""paravt: ask questions about long videos with parallel tool-calling agents (CLI)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from agents import benchmark
from agents.client.completion import EndpointError
from agents.media import video
from agents.protocol import THINK_PREFIX
from agents.question import Question
from agents.question_rules import check_question
from agents.synthetic import QAItem, read_manifest
from agents.terminal_text import plain
from cli.board import add_board_commands
from cli.log_setup import configure_logging
from cli.parser import Commands, Parser, global_arguments, version
from cli.report import RunDisplay, judge, result_record
from evals.cli import add_eval_commands
from graphs.builder import compile_graph
from graphs.context import Context, add_context_arguments
from graphs.presets import NANO
from graphs.regime import served_context
from graphs.runs import event_loop
from graphs.runs.run import RunInProgress, RunResult, run_question
from graphs.settings import Settings
from graphs.store.errors import DiskFull, StoreDamaged
from graphs.store.postgres.url import DatabaseError
from graphs.store.stores import open_board, open_checkpoints
from serving.cli import add_serve_command
from serving.fallback import endpoint_or_local

DEMO_DIR = Path(__file__).parent / "assets" / "demo"
#: The demo's graph settings: paravt-nano's trained regime (graphs.presets).
DEMO_CONTEXT = NANO
console = Console(stderr=True)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    masking = configure_logging(args.verbose)
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
        masking.redactor = settings.redact  # every line from here on is masked
        return args.handler(args, settings)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/yellow]")
        return 130
    except USER_ERRORS as exc:
        if args.debug:  # the traceback, its credentials masked too
            sys.stderr.write(plain(masking.redactor(traceback.format_exc())))
        else:
            message = escape(plain(masking.redactor(_message(exc))))
            console.print(f"[red]error:[/red] {message}", soft_wrap=True)  # commands copy whole
        return 1 if isinstance(exc, EndpointError) else 2


class CLIError(Exception):
    """A user error the CLI found itself; its message says what to do."""


# One message each, the traceback under --debug; anything else is a bug and bubbles up.
USER_ERRORS = (CLIError, EndpointError, RunInProgress, StoreDamaged, DiskFull, DatabaseError)
USER_ERRORS += (OSError, ValueError)


def _message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return f"{exc.strerror}: {exc.filename}"
    return str(exc) or type(exc).__name__


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="paravt", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    global_arguments(parser, defaults=True)
    common = argparse.ArgumentParser(add_help=False)
    global_arguments(common, defaults=False)
    commands = Commands(parser.add_subparsers(required=True, metavar="COMMAND"), common)

    run = commands.add_parser(
        "run", help="answer a question about a video (starts paravt-nano if no server is set)"
    )
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
    parser.add_argument(
        "--new-thread",
        action="store_true",
        help="with --thread-id: start that thread over (the board keeps its earlier runs)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_context_arguments(parser)


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    check_question(args.question, args.options, args.kind)  # before anything runs
    video.probe(args.video)
    display = RunDisplay(console)
    with _endpoint(settings) as settings:
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
        video_path, question, options = args.video, args.question, args.options
        check_question(question, options, args.kind)
        video.probe(video_path)
    else:
        demo, items = read_manifest(DEMO_DIR / "needle.json")
        item = next(i for i in items if i.kind == "multiple_choice")
        video_path, question, options = demo.path, item.question, item.options
        args.kind, prompt = item.kind, benchmark.prompt_text(item)
        console.print(
            f"[bold]demo[/bold] {escape(os.path.relpath(video_path))}: {demo.duration:g} s at "
            f"{demo.fps:g} fps, {demo.width}x{demo.height}, seed {demo.seed}\n"
            f"  {escape(question)}  {'  '.join(options)}  (expected {item.answer})"
        )
    display = RunDisplay(console)
    try:
        with _endpoint(settings) as settings:
            began = time.perf_counter()
            result = event_loop.run(
                _run(args, settings, video_path, question, options, DEMO_CONTEXT, prompt, display)
            )
    except EndpointError as exc:
        if exc.kind not in ("connection", "timeout"):
            raise
        raise CLIError(
            f"no OpenAI-compatible server answers at {settings.shown_endpoint}. Start one there "
            "(`app.py serve --port PORT` serves paravt-nano on the CPU), or leave out "
            "--endpoint and PARAVT_ENDPOINT: demo then starts paravt-nano by itself."
        ) from exc
    return _report(result, args, display, wall_s=time.perf_counter() - began, item=item)


@contextlib.contextmanager
def _endpoint(settings: Settings) -> Iterator[Settings]:
    """`settings` on an endpoint that answers, for the block: the configured one, checked
    before a frame is decoded, or a local paravt-nano server (`serving.fallback`)."""
    with endpoint_or_local(
        settings.endpoint,
        api_key=settings.api_key,
        timeout=settings.request_timeout,
        configured=settings.endpoint_configured,
        log_path=settings.home / "server.log",
        run=event_loop.run,
        say=lambda line: console.print(escape(line)),
    ) as url:
        yield settings if url == settings.endpoint else dataclasses.replace(settings, endpoint=url)


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
    board = open_board(settings)
    try:
        async with (
            settings.chat_model() as llm,
            open_checkpoints(settings) as saver,
        ):
            context = await served_context(args, base or Context(), llm)  # the model list first
            # the client's once-per-invocation questions go out while the graph compiles
            warm = asyncio.create_task(llm.warm_up(THINK_PREFIX if context.think_prefix else None))
            graph = compile_graph(llm, board, checkpointer=saver)  # the user's own paths: trusted
            await warm
            return await run_question(
                graph,
                board,
                video_path=video,
                question=Question(question, tuple(options), args.kind, prompt),
                context=context,
                thread_id=args.thread_id,
                new_thread=args.new_thread,
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
