"""Serve a checkpoint on GPUs with SGLang, which runs from its own Python environment.

SGLang pins torch and transformers versions that cannot share this project's environment,
so it is started as ``<its python> -m sglang.launch_server`` (setup: docs/serving.md). The
graph talks to it like to any OpenAI-compatible server.
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from serving.launch import serve_foreground

GUIDE = "docs/serving.md"
#: Room for the largest request the graph sends with ParaVT's settings (64 overview frames,
#: frames protocol, 3 turns x 5 calls x 16 frames): 304 images of 224x224, about 60 tokens each
#: with its time label (49 for the image), about 18k tokens, plus 3 x 2048 generated tokens.
#: 32k leaves headroom and keeps each request's KV cache small enough to batch many.
CONTEXT_LENGTH = 32_768
MEM_FRACTION_STATIC = 0.85
#: Most images in one request (SGLang refuses more): the 304 above, rounded up.
MAX_IMAGES = 320


class SGLangMissing(RuntimeError):
    """The given interpreter cannot run SGLang."""


def sglang_command(
    checkpoint: str,
    *,
    python: str = "python3",
    host: str = "127.0.0.1",
    port: int = 30000,
    tp: int = 1,
    context_length: int = CONTEXT_LENGTH,
    mem_fraction_static: float = MEM_FRACTION_STATIC,
    max_images: int | None = MAX_IMAGES,
    chat_template: str | None = None,
) -> list[str]:
    """The ``sglang.launch_server`` command line for the graph's needs.

    No ``--tool-call-parser`` and no ``--reasoning-parser``: tool calls and ``<think>`` stay in
    the content, where ``agents.protocol`` parses them. ``chat_template`` only for a checkpoint
    without its own template.

    >>> sglang_command("Qwen/Qwen3-VL-8B-Instruct", tp=2)[3:6]
    ['--model-path', 'Qwen/Qwen3-VL-8B-Instruct', '--host']
    """
    local = Path(checkpoint).expanduser()
    model_path = str(local.resolve()) if local.exists() else checkpoint
    command = [python, "-m", "sglang.launch_server", "--model-path", model_path]
    command += ["--host", host, "--port", str(port), "--tp-size", str(tp)]
    command += ["--context-length", str(context_length)]
    command += ["--mem-fraction-static", f"{mem_fraction_static:g}", "--enable-multimodal"]
    if max_images:
        command += ["--limit-mm-data-per-request", json.dumps({"image": max_images})]
    if chat_template:
        command += ["--chat-template", chat_template]
    return command


def check_sglang(python: str, timeout: float = 300.0) -> str:
    """SGLang's version as `python` imports it; raises SGLangMissing naming the guide."""
    probe = [python, "-c", "import sglang; print(sglang.__version__)"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        reason = f"cannot run it ({exc})"
    else:
        if done.returncode == 0:
            return done.stdout.strip()
        lines = done.stderr.strip().splitlines()
        reason = lines[-1] if lines else f"exit code {done.returncode}"
    raise SGLangMissing(
        f"{python} cannot import sglang: {reason}. SGLang needs its own environment; "
        f"see {GUIDE} to create one, then pass --sglang-python /path/to/that/env/bin/python"
    )


def launch_sglang(command: Sequence[str], base_url: str, on_ready: Callable[[str], None]) -> int:
    """Run SGLang in the foreground (its log on the terminal) until it exits or Ctrl-C;
    `on_ready` once GET /v1/models answers. Loading may take minutes (downloads, CUDA graphs),
    so there is no readiness deadline while the process lives."""
    return serve_foreground(command, base_url, ready_timeout=math.inf, on_ready=on_ready)
