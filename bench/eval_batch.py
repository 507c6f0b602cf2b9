"""Batch evaluation benchmarks on the synthetic needle task against a scripted server.

1. Throughput: samples/s at concurrency 1 and 16 with a fixed 200 ms server latency
   (target: 16 gives at least 8x the rate of 1).
2. Decode cache: a second run over the same videos (a new spec, a fresh process) decodes
   zero overview frames.
3. Memory: concurrency 16 over 720p videos, with crops, peaks under 3 GB resident.

Each measurement runs in its own process.   python bench/eval_batch.py  -> bench/eval_batch.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from testing.scripted import role_of, turn_of

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SMALL = {"n_videos": 16, "max_minutes": 1}
HD = {**SMALL, "width": 1280, "height": 720}


def reply(body: dict) -> str:
    """Crop once around the middle, then answer; sub-agents describe."""
    if role_of(body) == "sub_agent":
        return "a coloured shape"
    if turn_of(body):
        return "\n</think>\n<answer>A</answer>"
    return (
        '\n</think>\n<tool_call>{"name": "crop_video", "arguments": '
        '{"start_time": 5, "end_time": 25}}</tool_call>'
    )


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def child(args: argparse.Namespace) -> dict:
    from agents.client.llm import OpenAIChatModel
    from agents.media import frame_store
    from evals.runner import evaluate
    from evals.spec import EvalSpec
    from evals.tasks import get_task
    from testing.scripted import ScriptedServer

    frame_store.FRAME_CACHE.set_disk_dir(args.cache)
    task = get_task("needle")
    options = json.loads(args.options)
    context = {"overview_frames": 8, "crop_max_frames": 16, "max_turns": 1}
    with ScriptedServer(reply, latency_s=args.latency) as server:
        async with OpenAIChatModel(server.base_url, model="scripted") as llm:
            spec = EvalSpec(
                task="needle",
                data_dir=str(args.data),
                model=f"scripted-{args.tag}",
                context=context,
                options=options,
            )
            start = time.perf_counter()
            outcome = await evaluate(
                task, spec, llm=llm, out_root=args.out, concurrency=args.concurrency
            )
            wall = time.perf_counter() - start
    stats = dict(frame_store.FRAME_CACHE.stats)
    return {
        "concurrency": args.concurrency,
        "samples": outcome.ran,
        "errors": outcome.results["counts"]["errors"],
        "wall_s": round(wall, 2),
        "samples_per_s": round(outcome.ran / wall, 2),
        "frames_decoded": stats.get("frames_decoded", 0),
        "frame_sets_from_disk": stats.get("disk_hits", 0),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def run_child(
    data: Path,
    out: Path,
    cache: Path,
    *,
    concurrency: int,
    tag: str,
    options: dict,
    latency: float = 0.2,
) -> dict:
    command = [
        sys.executable,
        __file__,
        "--child",
        "--data",
        str(data),
        "--out",
        str(out),
        "--cache",
        str(cache),
        "--concurrency",
        str(concurrency),
        "--tag",
        tag,
        "--latency",
        str(latency),
        "--options",
        json.dumps(options),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    from evals.tasks.needle import load

    work = Path(tempfile.mkdtemp(prefix="paravt-evalbench-"))
    data, data_hd = work / "data", work / "data-hd"
    load(data, **SMALL)  # generate videos outside the timed runs
    load(data_hd, **HD)
    # Each throughput run starts with a cold frame cache of its own: both pay for decoding.
    one = run_child(data, work / "out", work / "cache-c1", concurrency=1, tag="c1", options=SMALL)
    many = run_child(
        data, work / "out", work / "cache-c16", concurrency=16, tag="c16", options=SMALL
    )
    cold = run_child(
        data_hd, work / "out", work / "cache-hd", concurrency=16, tag="hd1", options=HD, latency=0.0
    )
    warm = run_child(
        data_hd, work / "out", work / "cache-hd", concurrency=16, tag="hd2", options=HD, latency=0.0
    )
    report = {
        "throughput": {
            "concurrency_1": one,
            "concurrency_16": many,
            "speedup": round(many["samples_per_s"] / one["samples_per_s"], 2),
            "target_speedup": 8.0,
            "latency_s": 0.2,
        },
        "decode_cache": {
            "first_run_frames_decoded": cold["frames_decoded"],
            "second_run_frames_decoded": warm["frames_decoded"],
            "second_run_sets_from_disk": warm["frame_sets_from_disk"],
        },
        "memory_720p_concurrency_16": {
            "peak_rss_mb": cold["peak_rss_mb"],
            "samples": cold["samples"],
            "target_mb": 3072,
        },
    }
    out = Path(__file__).with_suffix(".json")
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--data", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--tag", default="")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--options", default="{}")
    cli = parser.parse_args()
    if cli.child:
        print(json.dumps(asyncio.run(child(cli))))
    else:
        main()
