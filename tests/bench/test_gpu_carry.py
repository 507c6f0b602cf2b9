"""What bench/gpu_carry.py packs for the device machine, and how the trainers name activation
checkpointing on the transformers versions they meet there and here."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.bench_scripts import load_bench
from training.trainer_args import checkpointing_field

ROOT = Path(__file__).resolve().parents[2]
gpu_carry = load_bench("gpu_carry")


def test_the_image_list_pins_what_the_carry_must_not_replace():
    names, pins = gpu_carry.image_packages()
    assert {"torch", "transformers", "accelerate", "opencv-python-headless", "uvloop"} <= names
    assert "torch==2.11.0" in pins and "transformers==5.17.0" in pins
    # the list says what the image lacks too: these must travel in the carry
    assert not {"trl", "datasets", "langgraph", "av", "pydantic", "sqlite-utils"} & names


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("langgraph-checkpoint-sqlite==3.1.2", "langgraph-checkpoint-sqlite"),
        ("Typing_Extensions>=4", "typing-extensions"),
        ("uvloop==0.21; sys_platform != 'win32'", "uvloop"),
        ("huggingface_hub[hf_xet]==1.33.0", "huggingface-hub"),
    ],
)
def test_requirement_names_compare_as_the_registry_does(line, name):
    assert gpu_carry.requirement_name(line) == name


def test_a_wheel_unpacks_as_an_installer_lays_it_out(tmp_path):
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("demo/__init__.py", "VALUE = 1\n")
        archive.writestr("demo-1.0.dist-info/METADATA", "Name: demo\nVersion: 1.0\n")
        archive.writestr("demo-1.0.data/purelib/demo_extra.py", "EXTRA = 2\n")
        archive.writestr("demo-1.0.data/scripts/demo-cli", "#!/bin/sh\n")
    site = tmp_path / "site"
    gpu_carry.unpack(wheel, site)
    assert sorted(p.name for p in site.iterdir()) == ["demo", "demo-1.0.dist-info", "demo_extra.py"]
    probe = "import demo_extra, importlib.metadata as m; print(m.version('demo'), demo_extra.EXTRA)"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["1.0", "2"]


def test_the_device_runner_says_what_to_do_without_the_archive(tmp_path):
    runner = tmp_path / "bench" / "gpu_run.sh"
    runner.parent.mkdir()
    runner.write_bytes((ROOT / "bench" / "gpu_run.sh").read_bytes())
    done = subprocess.run(["bash", str(runner)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "bench/gpu_carry.py" in done.stderr and "carry .gpu-carry" in done.stderr


@dataclass
class _Before524:
    gradient_checkpointing: bool = False


@dataclass
class _From524:
    activation_checkpointing: bool | None = None
    gradient_checkpointing: bool | None = None  # the deprecated alias


def test_activation_checkpointing_is_named_as_the_installed_transformers_names_it(tmp_path):
    assert checkpointing_field(_Before524) == "gradient_checkpointing"
    assert checkpointing_field(_From524) == "activation_checkpointing"
    from trl import GRPOConfig

    name = checkpointing_field(GRPOConfig)
    config = GRPOConfig(output_dir=str(tmp_path), bf16=False, **{name: True})
    assert getattr(config, name) is True
