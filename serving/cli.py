"""`app.py serve`: paravt-nano (or a checkpoint) on the CPU, or SGLang on GPUs."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from serving import sglang

console = Console(stderr=True)
APP = Path(__file__).resolve().parents[1] / "app.py"


def add_serve_command(
    commands: argparse._SubParsersAction, parents: list[argparse.ArgumentParser] = ()
) -> None:
    """`serve` and its flags; `parents` hold flags every command takes (app.py's globals)."""
    serve = commands.add_parser(
        "serve",
        parents=list(parents),
        help="serve paravt-nano on the CPU, or a checkpoint on GPUs with --sglang",
    )
    serve.add_argument(
        "--checkpoint",
        help="a Qwen3-VL checkpoint folder (default: assets/paravt-nano); "
        "with --sglang, a folder or a Hugging Face id",
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=30000)
    serve.add_argument("--dry-run", action="store_true", help="print the command, do not run it")
    gpu = serve.add_argument_group(f"GPU serving with SGLang ({sglang.GUIDE})")
    gpu.add_argument("--sglang", action="store_true", help="serve --checkpoint with SGLang")
    gpu.add_argument(
        "--sglang-python",
        help="the Python of SGLang's own environment (env PARAVT_SGLANG_PYTHON; default python3)",
    )
    gpu.add_argument("--tp", type=int, default=1, help="tensor-parallel GPUs (default 1)")
    gpu.add_argument(
        "--dp",
        type=int,
        default=1,
        help="data-parallel replicas, each on --tp GPUs, behind SGLang's router at --port "
        "(the replicas at the ports after it; default 1: one server)",
    )
    gpu.add_argument(
        "--context-length",
        type=int,
        default=sglang.CONTEXT_LENGTH,
        help=f"most tokens per request (default {sglang.CONTEXT_LENGTH})",
    )
    gpu.add_argument(
        "--mem-fraction-static",
        type=float,
        default=sglang.MEM_FRACTION_STATIC,
        help=f"GPU memory for weights and KV cache (default {sglang.MEM_FRACTION_STATIC})",
    )
    gpu.add_argument(
        "--max-images",
        type=int,
        default=sglang.MAX_IMAGES,
        help=f"most images per request; 0 for SGLang's default (default {sglang.MAX_IMAGES})",
    )
    gpu.add_argument("--chat-template", help="only for a checkpoint without its own template")
    serve.set_defaults(handler=cmd_serve)


def cmd_serve(args: argparse.Namespace, settings: Any = None) -> int:
    """paravt-nano (or --checkpoint) on the CPU through serving.server, or SGLang on GPUs."""
    from serving.launch import serve_foreground, server_command

    host = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    base_url = f"http://{host}:{args.port}/v1"
    if args.dp != 1 and not (args.sglang and args.dp > 1):
        console.print("[red]error:[/red] --dp N (N >= 2) serves replicas with --sglang")
        return 2
    if args.sglang:
        if not args.checkpoint:
            console.print("[red]error:[/red] --sglang needs --checkpoint (a folder or HF id)")
            return 2
        python = args.sglang_python or os.environ.get("PARAVT_SGLANG_PYTHON") or "python3"

        def server(host: str, port: int) -> list[str]:
            return sglang.sglang_command(
                args.checkpoint,
                python=python,
                host=host,
                port=port,
                tp=args.tp,
                context_length=args.context_length,
                mem_fraction_static=args.mem_fraction_static,
                max_images=args.max_images,
                chat_template=args.chat_template,
            )

        command = server(args.host, args.port)
        if args.dp > 1:
            return _serve_data_parallel(
                args, python, base_url, lambda port: server("127.0.0.1", port)
            )
    else:
        command = server_command(args.checkpoint, host=args.host, port=args.port)
    if args.dry_run:
        print(shlex.join(command))
        return 0
    if args.sglang:
        try:
            version = sglang.check_sglang(command[0])
        except sglang.SGLangMissing as exc:
            console.print(f"[red]error:[/red] {escape(str(exc))}")
            return 2
        console.print(f"starting SGLang {version}: {escape(shlex.join(command))}")
        return sglang.launch_sglang(command, base_url, _print_endpoint)
    try:
        return serve_foreground(command, base_url, ready_timeout=180, on_ready=_print_endpoint)
    except (RuntimeError, TimeoutError) as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return 1


def _serve_data_parallel(args: argparse.Namespace, python: str, base_url: str, worker) -> int:
    """--dp N: N replicas and SGLang's router (serving.sglang_dp)."""
    from serving import sglang_dp

    try:
        parallel = sglang_dp.plan(
            worker, python=python, dp=args.dp, tp=args.tp, host=args.host, port=args.port
        )
    except ValueError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return 2
    if args.dry_run:
        print("\n".join(parallel.lines()))
        return 0
    try:
        version = sglang.check_sglang(python)
        router = sglang_dp.check_router(python)
    except sglang.SGLangMissing as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return 2
    console.print(f"starting {args.dp} SGLang {version} replicas behind its router (smg {router})")
    return sglang_dp.launch(parallel, base_url, _print_endpoint)


def _print_endpoint(base_url: str) -> None:
    python = os.path.relpath(sys.executable)
    app = os.path.relpath(APP)
    console.print(
        f"[bold green]ready[/bold green] at {base_url}; in another shell:\n"
        f"  {python} {app} --endpoint {base_url} demo\n"
        f"  (or export PARAVT_ENDPOINT={base_url} for every app.py command)"
    )
