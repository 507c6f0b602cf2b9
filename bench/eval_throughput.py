"""Batch-eval throughput against the endpoint's own limit, side by side in one run.

A scripted server of fixed latency answers every request. First `app.py eval run` (the real
CLI, a subprocess) runs the needle task with dispatch `none` at concurrency 16; then a bare
asyncio loop (httpx2, a semaphore of 16; on the event loop the CLI uses, `graphs.runs.event_loop`)
sends the very request bodies the eval sent. Both are
timed the same way, at the server, from the first request's arrival to the last answer.
Target: the eval reaches at least 0.9x the bare loop's requests per second. Measured at
several latencies: the shorter the latency, the more the eval's own CPU per sample shows.

    python bench/eval_throughput.py   # -> bench/eval_throughput.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphs.runs import event_loop  # noqa: E402

RESULT = Path(__file__).with_suffix(".json")
TARGET = 0.9


class Clock:
    """A responder that answers at once (the server adds the latency) and notes arrivals."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> str:
        with self._lock:
            self.arrivals.append(time.perf_counter())
        return "The answer is clear.</think><answer>A</answer>"

    def span(self, latency: float) -> tuple[int, float]:
        """(requests, seconds from the first arrival to the last answer)."""
        return len(self.arrivals), max(self.arrivals) + latency - min(self.arrivals)


def eval_cli(base_url: str, data: Path, out: Path, options: dict, concurrency: int) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARAVT_")}
    env["OMP_NUM_THREADS"] = "1"
    command = [sys.executable, str(ROOT / "app.py"), "--env-file", "", "--endpoint", base_url]
    command += ["eval", "run", "--task", "needle", "--data-dir", str(data), "--out", str(out)]
    command += [f"--option={k}={v}" for k, v in options.items()]
    command += ["--dispatch", "none", "--concurrency", str(concurrency)]
    began = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"eval run failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - began


async def bare_loop(base_url: str, bodies: list[dict], concurrency: int) -> None:
    import httpx2  # the HTTP library the eval's client uses, so only the eval's own work differs

    gate = asyncio.Semaphore(concurrency)
    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx2.AsyncClient(base_url=base_url, timeout=60, limits=limits) as client:

        async def send(body: dict) -> None:
            async with gate:
                response = await client.post("/chat/completions", json=body)
                response.raise_for_status()
                if body.get("stream"):  # read as a client reads SSE: every event decoded
                    events = response.text.split("\n\n")
                    [json.loads(e[6:]) for e in events if e.startswith("data: {")]
                else:
                    json.loads(response.content)["choices"][0]["message"]["content"]

        await asyncio.gather(*(send(b) for b in bodies))


def measure(work: Path, options: dict, latency: float, concurrency: int) -> dict:
    """The eval CLI, then the bare loop replaying its requests, on one fixed latency."""
    from testing.scripted import ScriptedServer

    clock, replay = Clock(), Clock()
    out = work / f"out-{latency}"
    with ScriptedServer(clock, latency_s=latency) as server:
        wall = eval_cli(server.base_url, work / "data", out, options, concurrency)
        bodies = [b for b in server.requests if b.get("messages")]
    with ScriptedServer(replay, latency_s=latency) as server:
        event_loop.run(bare_loop(server.base_url, bodies, concurrency))  # the eval's loop
    n_eval, span_eval = clock.span(latency)
    n_bare, span_bare = replay.span(latency)
    ratio = (n_eval / span_eval) / (n_bare / span_bare)
    return {
        "latency_s": latency,
        "ceiling_per_s": round(concurrency / latency, 2),
        "eval_run_per_s": round(n_eval / span_eval, 2),
        "bare_loop_per_s": round(n_bare / span_bare, 2),
        "eval_over_bare": round(ratio, 3),
        "met": ratio >= TARGET,
        "eval_cli_wall_s": round(wall, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=64, help="3 samples each")
    parser.add_argument("--latency", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--json", type=Path, default=RESULT)
    args = parser.parse_args()
    from evals.tasks.needle import load

    work = Path(tempfile.mkdtemp(prefix="paravt-throughput-"))
    options = {"n_videos": args.videos, "max_minutes": 1}
    load(work / "data", **options)  # videos made outside the timed runs
    report = {
        "samples": 3 * args.videos,
        "concurrency": args.concurrency,
        "dispatch": "none",
        "target_eval_over_bare": TARGET,
        "by_latency": [measure(work, options, lat, args.concurrency) for lat in args.latency],
        "cpus": os.cpu_count(),
    }
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
