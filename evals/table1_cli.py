"""`app.py eval table1`: one Table 1 row of the ParaVT paper on the release's seven splits."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from evals.table1 import ROWS, run_row, table_text
from graphs.regime import served_regime
from graphs.runs import event_loop
from graphs.settings import Settings

console = Console(stderr=True)


def add_table1_command(actions: argparse._SubParsersAction, parents: list) -> None:
    cmd = actions.add_parser(
        "table1",
        help="a row of the ParaVT paper's Table 1 on the release's seven splits",
        parents=parents,
        description=(
            "Runs the row's model (served at --endpoint) on videomme, videomme with subtitles, "
            "longvideobench, lvbench, mlvu, mmvu and charades with the release's locked "
            "settings (--protocol release-eval) and writes the release's summary table."
        ),
    )
    cmd.add_argument("--row", required=True, choices=sorted(ROWS))
    cmd.add_argument(
        "--data-root",
        type=Path,
        required=True,
        help="a folder holding videomme/, longvideobench/, lvbench/, mlvu/, mmvu/, charades/ "
        "in their published layouts",
    )
    cmd.add_argument("--out", type=Path, default=Path("runs/table1"))
    cmd.add_argument("--limit", type=int, help="only the first N samples of each split")
    cmd.add_argument("--concurrency", type=int, default=4)
    cmd.add_argument(
        "--video-channel",
        choices=("image_url", "video_url"),
        help="override the row's channels (image_url for a server that cannot decode video); "
        "the summary records it",
    )
    cmd.add_argument(
        "--max-new-tokens", type=int, help="override the release's 2,048 (the summary records it)"
    )
    cmd.set_defaults(handler=cmd_table1)


def cmd_table1(args: argparse.Namespace, settings: Settings) -> int:
    row = ROWS[args.row]
    channel = args.video_channel

    async def go():
        async with settings.chat_model() as llm:
            regime = await served_regime(llm)
            decodes = regime is None or regime.get("video_input", False)
            video_url = "video_url" in (row.mcq[1], row.charades[1]) and channel != "image_url"
            if not decodes and video_url:
                console.print(
                    f"[red]not started:[/red] row {args.row} sends Charades-STA as a video_url, "
                    "and the server at the endpoint takes frames only: serve the model with vLLM "
                    "or SGLang, or pass --video-channel image_url (recorded in the summary)."
                )
                return None
            return await run_row(
                args.row,
                data_root=args.data_root,
                llm=llm,
                model=await llm.model_name(),
                out_root=args.out,
                limit=args.limit,
                concurrency=args.concurrency,
                channel=channel,
                max_new_tokens=args.max_new_tokens,
                on_split=lambda name: console.print(f"[bold]{args.row}[/bold]: {name}"),
            )

    result = event_loop.run(go())
    if result is None:
        return 2
    print(table_text(result))
    console.print(f"summary: {args.out / args.row / 'summary.json'}")
    return 0
