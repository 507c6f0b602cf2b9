"""How PARA-GRPO through TRL is launched: the accelerate configs as accelerate reads them,
the GPU bench's refusal and CPU smoke run, and the old entry point (what it trains:
tests/training/test_trl_grpo.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from training.trl import grpo as trl_grpo  # noqa: E402
from training.trl.grpo import TRLRunConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


# --- accelerate configs, as accelerate's own launcher reads them ----------------------------


def launch(config: str):
    """How `accelerate launch --config_file training/configs/<config>` reads it: its parsed
    arguments and the environment it exports to each process."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils.launch import prepare_multi_gpu_env

    args = launch_command_parser().parse_args(
        ["--config_file", str(ROOT / "training/configs" / config), "-m", "training.trl.grpo"]
    )
    args, _, _ = _validate_launch_command(args)
    env = {} if args.use_deepspeed else prepare_multi_gpu_env(args)
    return args, {**env, "WORLD_SIZE": str(args.num_processes)}


@pytest.mark.parametrize(
    ("config", "flags", "refused"),
    [
        ("accelerate_ddp.yaml", {"gradient_checkpointing": True}, None),
        ("accelerate_zero3.yaml", {"gradient_checkpointing": True}, None),
        ("accelerate_fsdp2.yaml", {"generation": "vllm-colocate"}, None),
        # transformers' Trainer raises for FSDP's own activation checkpointing together with
        # the activation_checkpointing argument (trainer.py, create_accelerator_and_postprocess)
        (
            "accelerate_fsdp2.yaml",
            {"generation": "vllm-colocate", "gradient_checkpointing": True},
            "drop --gradient-checkpointing",
        ),
        ("accelerate_fsdp2.yaml", {}, "vllm"),  # sharded forwards with per-rank episodes hang
    ],
)
def test_each_accelerate_config_launches_what_it_says(config, flags, refused, tmp_path):
    args, env = launch(config)
    kind = {"accelerate_ddp.yaml": "multi_gpu", "accelerate_zero3.yaml": "use_deepspeed"}
    assert getattr(args, kind.get(config, "use_fsdp")) and args.num_processes == 8
    if args.use_fsdp:
        assert env["FSDP_VERSION"] == "2" and env["FSDP_ACTIVATION_CHECKPOINTING"] == "true"
    if args.use_deepspeed:
        assert args.zero_stage == 3
    run = TRLRunConfig(model="m", output_dir=str(tmp_path), **flags)
    if refused:
        with pytest.raises(ValueError, match=refused):
            trl_grpo.check_launch(run, env)
    else:
        trl_grpo.check_launch(run, env)


@pytest.mark.slow
def test_the_gpu_bench_refuses_without_cuda_and_runs_its_code_on_the_cpu(tmp_path):
    bench = [sys.executable, str(ROOT / "bench" / "gpu_grpo.py")]
    if not torch.cuda.is_available():
        refused = subprocess.run(bench, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert refused.returncode == 1 and "CUDA GPU" in refused.stderr
        assert "Traceback" not in refused.stderr
    out = tmp_path / "smoke.json"
    smoke = [*bench, "--smoke", "--steps", "1", "--group-size", "2", "--max-new-tokens", "8"]
    done = subprocess.run(
        [*smoke, "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["steps"] == 1 and report["episodes_per_step"] == 4
    assert report["step_s"][0] > 0 and report["generated_tokens_per_s"][0] > 0


def test_the_old_entry_point_still_runs_with_a_deprecation_line():
    done = subprocess.run(
        [sys.executable, "-m", "training.trl_grpo", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "--arm" in done.stdout
    assert "deprecated: use python -m training.trl.grpo" in done.stderr
