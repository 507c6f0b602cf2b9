"""`app.py serve`: paravt-nano on the CPU over real HTTP, and the SGLang command line."""

from __future__ import annotations

import importlib.util
import json
import logging
import shlex
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from serving import checkpoints, launch
from serving.checkpoints import NANO_DIR, default_checkpoint
from serving.launch import endpoint_ready, free_port, server_command
from serving.sglang import sglang_command

ROOT = Path(__file__).resolve().parents[2]
QWEN = "Qwen/Qwen3-VL-8B-Instruct"


def app(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "app.py"), "--env-file", "", "serve", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def flags(command: list[str]) -> dict[str, str | None]:
    """`--flag value` pairs (None for a bare switch) after `python -m module`."""
    out, rest = {}, command[3:]
    for i, word in enumerate(rest):
        if word.startswith("--"):
            following = rest[i + 1] if i + 1 < len(rest) else "--"
            out[word] = None if following.startswith("--") else following
    return out


def test_sglang_command_has_the_flags_the_graph_needs():
    command = sglang_command(QWEN, python="/envs/sglang/bin/python", port=31000, tp=2)
    assert command[:3] == ["/envs/sglang/bin/python", "-m", "sglang.launch_server"]
    got = flags(command)
    assert got == {
        "--model-path": QWEN,
        "--host": "127.0.0.1",
        "--port": "31000",
        "--tp-size": "2",
        "--context-length": "32768",
        "--mem-fraction-static": "0.85",
        "--enable-multimodal": None,
        "--limit-mm-data-per-request": '{"image": 320}',
    }
    assert json.loads(got["--limit-mm-data-per-request"]) == {"image": 320}


def test_sglang_command_options(tmp_path, monkeypatch):
    (tmp_path / "ckpt").mkdir()
    monkeypatch.chdir(tmp_path)
    got = flags(
        sglang_command(
            "ckpt",
            context_length=65536,
            mem_fraction_static=0.7,
            max_images=0,
            chat_template="qwen2-vl",
        )
    )
    assert got["--model-path"] == str(tmp_path / "ckpt"), "a local folder is passed absolute"
    assert got["--context-length"] == "65536" and got["--mem-fraction-static"] == "0.7"
    assert got["--chat-template"] == "qwen2-vl"
    assert "--limit-mm-data-per-request" not in got, "0 leaves SGLang's own limit"


def test_dry_run_prints_the_sglang_command():
    done = app(
        "--sglang",
        "--checkpoint",
        QWEN,
        "--sglang-python",
        "/envs/sglang/bin/python",
        "--port",
        "31000",
        "--tp",
        "4",
        "--max-images",
        "128",
        "--dry-run",
    )
    assert done.returncode == 0, done.stderr
    expected = sglang_command(
        QWEN, python="/envs/sglang/bin/python", port=31000, tp=4, max_images=128
    )
    assert shlex.split(done.stdout.strip()) == expected


def test_dry_run_prints_the_cpu_command_on_paravt_nano():
    done = app("--port", "31001", "--dry-run")
    assert done.returncode == 0, done.stderr
    command = shlex.split(done.stdout.strip())
    assert command[1:3] == ["-m", "serving.server"]
    assert flags(command)["--model"] == str(NANO_DIR)


def test_a_python_without_sglang_exits_2_naming_the_guide(tmp_path):
    missing = app("--sglang", "--checkpoint", QWEN, "--sglang-python", str(tmp_path / "python"))
    assert missing.returncode == 2
    assert "docs/serving.md" in " ".join(missing.stderr.split())
    no_checkpoint = app("--sglang", "--dry-run")
    assert no_checkpoint.returncode == 2 and "--checkpoint" in no_checkpoint.stderr


@pytest.mark.skipif(importlib.util.find_spec("sglang") is not None, reason="sglang installed")
def test_this_environment_is_not_an_sglang_environment():
    done = app("--sglang", "--checkpoint", QWEN, "--sglang-python", sys.executable, timeout=120)
    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert "cannot import sglang" in message and "docs/serving.md" in message


def test_the_default_checkpoint_is_the_shipped_nano_or_none(tmp_path, monkeypatch, caplog):
    assert default_checkpoint() == NANO_DIR
    (tmp_path / "config.json").write_text("{}")
    assert default_checkpoint(tmp_path) is None, "no weights"
    monkeypatch.setattr(launch, "default_checkpoint", lambda: None)
    with caplog.at_level(logging.WARNING):
        command = server_command(port=31002)
    assert "--model" not in command, "the server falls back to the tiny model"
    assert "paravt-nano checkpoint is missing" in caplog.text
    assert checkpoints.NANO_DIR == ROOT / "assets" / "paravt-nano"


class Built(Exception):
    """Raised by a stand-in for the tiny model's builder: the server chose the fallback."""


def test_the_server_warns_and_falls_back_to_the_tiny_model_without_nano(monkeypatch, caplog):
    pytest.importorskip("torch")
    from serving import server

    def build(seed, cache_dir):
        raise Built(seed)

    monkeypatch.setattr(server, "default_checkpoint", lambda: None)
    monkeypatch.setattr(server, "ensure_tiny_model", build)
    with caplog.at_level(logging.WARNING), pytest.raises(Built):
        server.main(["--seed", "3"])
    assert "paravt-nano checkpoint is missing" in caplog.text
    monkeypatch.setattr(server, "default_checkpoint", lambda: NANO_DIR)
    with pytest.raises(Built):  # --tiny asks for it on purpose
        server.main(["--tiny"])


@pytest.mark.integration
def test_cpu_serve_answers_models_and_stops_with_its_launcher(tmp_path):
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "app.py"), "--env-file", "", "serve", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
    try:
        deadline = time.monotonic() + 120
        while not endpoint_ready(base_url, timeout=1.0):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        (model,) = httpx.get(f"{base_url}/models").json()["data"]
        assert model["id"] == "paravt-nano" and model["root"] == str(NANO_DIR)
        deadline = time.monotonic() + 10  # the hint follows readiness
        while f"--endpoint {base_url} demo" not in " ".join(log.read_text().split()):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert not endpoint_ready(base_url, timeout=1.0), "the server stops with app.py serve"


def test_scripted_process_serves_for_the_block_and_stops_after():
    from testing.scripted import scripted_process

    with scripted_process("--latency", "0") as base_url:
        assert endpoint_ready(base_url)
        body = httpx.post(
            base_url + "/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        ).json()
        assert body["choices"][0]["message"]["content"]
    assert not endpoint_ready(base_url)


def test_dry_run_of_data_parallel_prints_each_replica_and_the_router(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    done = app(
        "--sglang",
        "--checkpoint",
        QWEN,
        "--sglang-python",
        "/envs/sglang/bin/python",
        "--dp",
        "3",
        "--port",
        "31000",
        "--host",
        "0.0.0.0",
        "--dry-run",
    )
    assert done.returncode == 0, done.stderr
    *replicas, router = done.stdout.strip().splitlines()
    assert len(replicas) == 3
    for rank, line in enumerate(replicas):
        words = shlex.split(line.removesuffix(" &"))
        assert words[0] == f"CUDA_VISIBLE_DEVICES={rank}"
        expected = sglang_command(
            QWEN, python="/envs/sglang/bin/python", host="127.0.0.1", port=31001 + rank
        )
        assert words[1:] == expected
    assert shlex.split(router) == [
        "/envs/sglang/bin/python",
        "-m",
        "smg.launch_router",
        "--host",
        "0.0.0.0",
        "--port",
        "31000",
        "--policy",
        "cache_aware",
        "--worker-urls",
        "http://127.0.0.1:31001",
        "http://127.0.0.1:31002",
        "http://127.0.0.1:31003",
    ]


def test_data_parallel_needs_sglang_and_enough_gpus(monkeypatch):
    without = app("--dp", "2", "--dry-run")
    assert without.returncode == 2 and "--sglang" in without.stderr
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2")
    short = app("--sglang", "--checkpoint", QWEN, "--dp", "2", "--tp", "2", "--dry-run")
    said = " ".join(short.stderr.split())
    assert short.returncode == 2 and "needs 4 GPUs; CUDA_VISIBLE_DEVICES names 3" in said
