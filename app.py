"""paravt: ask questions about long videos with parallel tool-calling agents (CLI)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agents.synthetic import read_manifest
from agents.video import VideoError
from evals.cli import add_eval_commands
from graphs.board import Board
from graphs.builder import compile_graph
from graphs.context import Context, add_context_arguments, context_from_args
from graphs.run import RunResult, run_question
from graphs.settings import DEFAULT_ENDPOINT, Settings
from graphs.traces import write_jsonl

DEMO_DIR = Path(__file__).parent / "assets" / "demo"
console = Console(stderr=True)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if not args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    settings = Settings.load(
        env_file=args.env_file,
        endpoint=args.endpoint,
        model=args.model,
        home=args.home,
        board_db=args.board_db,
        checkpoint_db=args.checkpoint_db,
    )
    try:
        return args.handler(args, settings)
    except VideoError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paravt", description=__doc__)
    parser.add_argument(
        "--endpoint",
        help=f"OpenAI-compatible base URL (env PARAVT_ENDPOINT; default {DEFAULT_ENDPOINT})",
    )
    parser.add_argument("--model", help="model name at the endpoint (default: the first listed)")
    parser.add_argument("--home", type=Path, help="folder for the databases (default .paravt)")
    parser.add_argument("--board-db", type=Path, help="board SQLite file")
    parser.add_argument("--checkpoint-db", type=Path, help="LangGraph checkpoint SQLite file")
    parser.add_argument("--env-file", default=".env", help="settings file (default .env)")
    parser.add_argument("-v", "--verbose", action="store_true")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="answer a question about a video")
    run.add_argument("--video", required=True)
    run.add_argument("--question", required=True)
    _add_question_arguments(run)
    run.set_defaults(handler=cmd_run)

    demo = commands.add_parser("demo", help="run the bundled synthetic video on a local model")
    demo.add_argument("--video", help="your own video instead of the bundled one")
    demo.add_argument("--question", help="your own question (with --video)")
    _add_question_arguments(demo)
    demo.set_defaults(handler=cmd_demo)

    board = commands.add_parser("board", help="list runs, or show one run's notes")
    board.add_argument("run_id", nargs="?")
    board.add_argument("--limit", type=int, default=20)
    board.set_defaults(handler=cmd_board)

    traces = commands.add_parser("traces", help="trace commands")
    traces_commands = traces.add_subparsers(required=True, metavar="ACTION")
    export = traces_commands.add_parser("export", help="write stored traces as JSONL")
    export.add_argument("--out", type=Path, required=True)
    export.add_argument("--run", action="append", dest="runs", help="only these run ids")
    export.set_defaults(handler=cmd_traces_export)

    studio = commands.add_parser(
        "studio", help="open the graph in LangGraph Studio (langgraph dev)"
    )
    studio.add_argument(
        "--port", type=int, default=2025, help="dev server port (2024 is often taken)"
    )
    studio.set_defaults(handler=cmd_studio)

    add_eval_commands(commands)

    serve = commands.add_parser("serve", help="serve a local checkpoint (default: tiny model)")
    serve.add_argument("--checkpoint", help="a Qwen3-VL checkpoint folder")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=30000)
    serve.set_defaults(handler=cmd_serve)
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
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_context_arguments(parser)


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    result = asyncio.run(_run(args, settings, args.video, args.question, args.options))
    return _report(result, args)


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    base = Context()
    if args.video:
        if not args.question:
            console.print("[red]error:[/red] --video needs --question")
            return 2
        video, question, options = args.video, args.question, args.options
    else:
        demo, items = read_manifest(DEMO_DIR / "needle.json")
        item = next(i for i in items if i.kind == "multiple_choice")
        video, question, options = str(DEMO_DIR / Path(demo.path).name), item.question, item.options
        args.kind = args.kind or item.kind
        base = Context(overview_frames=8)  # too few to catch the 3 s needle: the agent must look
        console.print(
            f"[bold]demo[/bold] {video}: {question} {list(options)} (expected answer {item.answer})"
        )
    with _endpoint(settings) as endpoint:
        settings = dataclasses.replace(settings, endpoint=endpoint)
        result = asyncio.run(_run(args, settings, video, question, options, base))
    return _report(result, args)


@contextlib.contextmanager
def _endpoint(settings: Settings) -> Iterator[str]:
    """The configured endpoint if it answers, else a local tiny-model server for the block."""
    from serving.launch import endpoint_ready, local_server

    if endpoint_ready(settings.endpoint):
        yield settings.endpoint
        return
    if settings.endpoint != DEFAULT_ENDPOINT:
        raise SystemExit(f"error: no OpenAI-compatible server answers at {settings.endpoint}")
    console.print("no server at the default endpoint: starting the local CPU model server ...")
    with local_server(log_path=settings.home / "server.log") as url:
        console.print(f"local server ready at {url}")
        yield url


async def _run(
    args, settings: Settings, video: str, question: str, options, base: Context | None = None
) -> RunResult:
    context = context_from_args(args, base or Context())
    board = Board(settings.board_path)
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    settings.checkpoint_path.parent.mkdir(parents=True, exist_ok=True)
    async with (
        settings.chat_model() as llm,
        AsyncSqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver,
    ):
        graph = compile_graph(llm, board, checkpointer=saver)
        return await run_question(
            graph,
            board,
            video_path=video,
            question=question,
            options=options,
            kind=args.kind,
            context=context,
            thread_id=args.thread_id,
            on_update=_show_update,
        )


def _show_update(node: str, values: dict[str, Any]) -> None:
    if node == "prepare":
        times = values["overview"]["timestamps"]
        console.print(
            f"[cyan]overview[/cyan] {len(times)} frames, {times[0]:.1f}-{times[-1]:.1f} s"
            f" of a {values['duration']:.1f} s video"
        )
    elif node == "main_agent":
        call = values["model_calls"][0]
        usage = call["completion"]["usage"]
        console.print(
            f"[cyan]main agent[/cyan] turn {call['turn']}: "
            f"{usage['prompt_tokens']}+{usage['completion_tokens']} tokens, "
            f"{call['completion']['latency_s']:.2f} s"
        )
        for record in values.get("calls", []):
            window = (
                f"{record['start']:.1f}-{record['end']:.1f} s"
                if record["error"] is None
                else f"[red]refused[/red] {record['error']}"
            )
            console.print(f"  crop_video #{record['index']}: {window}")
        if values.get("status"):
            console.print(f"  [bold]{values['status']}[/bold]: {values.get('answer')!r}")
    elif node == "sub_agent":
        for result in values["tool_results"]:
            console.print(
                f"[cyan]sub-agent[/cyan] #{result['index']} "
                f"{result['start']:.1f}-{result['end']:.1f} s: "
                f"{result['content'][:160]!r}"
            )


def _report(result: RunResult, args: argparse.Namespace) -> int:
    if args.json:
        print(
            json.dumps(
                {
                    "run_id": result.run_id,
                    "thread_id": result.thread_id,
                    "status": result.status,
                    "answer": result.answer,
                    "error": result.error,
                    "cost": result.trace["cost"] if result.trace else None,
                }
            )
        )
    elif result.status == "failed":
        console.print(
            f"[red]run {result.run_id} failed:[/red] {result.error}\n"
            f"resume it with --thread-id {result.thread_id}"
        )
    else:
        cost = result.trace["cost"]
        console.print(
            f"[bold green]{result.status}[/bold green] run {result.run_id}: "
            f"answer {result.answer!r}; {cost['model_calls']} model calls, "
            f"{cost['prompt_tokens'] + cost['completion_tokens']} tokens, "
            f"{cost['frames_encoded']} frames encoded"
        )
    return 1 if result.status == "failed" else 0


def cmd_board(args: argparse.Namespace, settings: Settings) -> int:
    board = Board(settings.board_path)
    if args.run_id is None:
        table = Table("run", "status", "answer", "question", title=str(settings.board_path))
        for run in board.runs(limit=args.limit):
            table.add_row(run["run_id"], run["status"], str(run["answer"]), run["question"][:60])
        Console().print(table)
        return 0
    run = board.run(args.run_id)
    if run is None:
        console.print(f"[red]error:[/red] no run {args.run_id!r} in {settings.board_path}")
        return 2
    table = Table(
        "note",
        "window (s)",
        "verdict",
        "tokens",
        "content",
        title=f"run {args.run_id}: {run['status']}, answer {run['answer']!r}",
    )
    for note in board.notes(args.run_id):
        table.add_row(
            note.key,
            f"{note.start:.1f}-{note.end:.1f}",
            str(note.verdict),
            str(note.prompt_tokens + note.completion_tokens),
            note.content[:120],
        )
    Console().print(table)
    return 0


def cmd_traces_export(args: argparse.Namespace, settings: Settings) -> int:
    board = Board(settings.board_path)
    wanted = set(args.runs or [])
    count = write_jsonl(
        (t for t in board.traces() if not wanted or t["run_id"] in wanted), args.out
    )
    console.print(f"wrote {count} traces to {args.out}")
    return 0


def cmd_studio(args: argparse.Namespace, settings: Settings) -> int:
    """Start `langgraph dev` offline: no analytics, no version check, no tracing upload."""
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
        "PARAVT_ENDPOINT": settings.endpoint,
        "PARAVT_HOME": str(settings.home),
    }
    langgraph = Path(sys.executable).with_name("langgraph")
    command = [
        str(langgraph),
        "dev",
        "--no-browser",
        "--port",
        str(args.port),
        "--config",
        str(Path(__file__).parent / "langgraph.json"),
    ]
    return subprocess.call(command, env=env, cwd=Path(__file__).parent)


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from serving.server import main as serve_main

    argv = ["--host", args.host, "--port", str(args.port)]
    if args.checkpoint:
        argv += ["--model", args.checkpoint]
    return serve_main(argv) or 0


if __name__ == "__main__":
    sys.exit(main())
