"""`serve --sglang --dp N`: N SGLang replicas behind SGLang's own router.

SGLang's router is the SGLang Model Gateway (``smg``, pinned beside SGLang in
requirements/sglang.txt). Each replica is ``sglang.launch_server`` with the graph's flags
(`serving.sglang.sglang_command`) on 127.0.0.1 at the ports after the served one, on its
own ``--tp`` GPUs; the router (``python -m smg.launch_router``, cache-aware: a request goes
to the replica whose prefix cache holds most of it, as a main agent's turns share their
overview frames) listens where a single server would, so clients see one endpoint.

Why not ``smg serve --dp-size N``, which starts both: with SGLang 0.5.23 installed, SGLang's
own ``--dp-size`` replaces smg 1.13.0's of the same name and ``smg serve`` stops on a missing
``data_parallel_size``; tests/serving/test_sglang_released.py checks both command lines against the
released parsers. Nor SGLang's built-in ``--dp-size`` controller: SGLang recommends the
router for data parallelism.
"""

from __future__ import annotations

import math
import os
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from serving.launch import serve_foreground, stop, wait_until_ready
from serving.sglang import GUIDE, SGLangMissing

POLICY = "cache_aware"


@dataclass(frozen=True)
class Worker:
    command: list[str]
    gpus: str  # CUDA_VISIBLE_DEVICES
    url: str  # its OpenAI base URL


@dataclass(frozen=True)
class DataParallel:
    workers: list[Worker]
    router: list[str]

    def lines(self) -> list[str]:
        """The commands, one a line, as a shell runs them (the dry run's output)."""
        lines = [f"CUDA_VISIBLE_DEVICES={w.gpus} {shlex.join(w.command)} &" for w in self.workers]
        return [*lines, shlex.join(self.router)]


def visible_gpus() -> list[str]:
    """The GPUs this process may use: CUDA_VISIBLE_DEVICES, else 0, 1, 2, ..."""
    named = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    return [g.strip() for g in named.split(",") if g.strip()]


def plan(
    worker_command: Callable[[int], list[str]],
    *,
    python: str,
    dp: int,
    tp: int,
    host: str,
    port: int,
) -> DataParallel:
    """``dp`` replicas (``worker_command(port)`` each) at the ports after ``port``, on ``tp``
    GPUs each, and the router at ``host:port``."""
    gpus = visible_gpus() or [str(i) for i in range(dp * tp)]
    if len(gpus) < dp * tp:
        raise ValueError(
            f"--dp {dp} --tp {tp} needs {dp * tp} GPUs; CUDA_VISIBLE_DEVICES names {len(gpus)}"
        )
    workers = []
    for rank in range(dp):
        worker_port = port + 1 + rank
        workers.append(
            Worker(
                worker_command(worker_port),
                ",".join(gpus[rank * tp : (rank + 1) * tp]),
                f"http://127.0.0.1:{worker_port}/v1",
            )
        )
    router = [python, "-m", "smg.launch_router", "--host", host, "--port", str(port)]
    router += ["--policy", POLICY, "--worker-urls"]
    router += [w.url.removesuffix("/v1") for w in workers]
    return DataParallel(workers, router)


def check_router(python: str, timeout: float = 120.0) -> str:
    """The router's version as `python` imports it; SGLangMissing naming the guide."""
    probe = [python, "-c", "import importlib.metadata as m; print(m.version('smg'))"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        reason = f"cannot run it ({exc})"
    else:
        if done.returncode == 0:
            return done.stdout.strip()
        reason = "smg (SGLang's router) is not installed there"
    raise SGLangMissing(
        f"--dp needs SGLang's router in {python}: {reason}. Install requirements/sglang.txt "
        f"there ({GUIDE})"
    )


def launch(parallel: DataParallel, base_url: str, on_ready: Callable[[str], None]) -> int:
    """Start the replicas, wait until each answers, then run the router in the foreground
    until it exits or Ctrl-C; every replica stops with it."""
    started: list[subprocess.Popen] = []
    try:
        for worker in parallel.workers:
            env = {**os.environ, "CUDA_VISIBLE_DEVICES": worker.gpus}
            started.append(subprocess.Popen(worker.command, env=env))
        for process, worker in zip(started, parallel.workers, strict=True):
            wait_until_ready(process, worker.url, timeout=math.inf, command=worker.command)
        return serve_foreground(parallel.router, base_url, ready_timeout=120, on_ready=on_ready)
    except KeyboardInterrupt:
        return 0
    finally:
        for process in started:
            stop(process)
