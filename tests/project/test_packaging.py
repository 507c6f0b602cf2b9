"""A quiet install (issue 40): the project's own metadata builds without setuptools'
deprecation warnings, its license an SPDX expression (PEP 639)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_metadata_builds_without_deprecation_warnings(tmp_path):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"  # a string, not a TOML table
    assert any(r.startswith("setuptools>=77") for r in project["build-system"]["requires"])
    for name in ("pyproject.toml", "README.md", "app.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    for package in ("agents", "graphs", "training", "evals", "serving"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("*.pyc"))
    (tmp_path / "out").mkdir()
    build = (
        "import setuptools.build_meta as backend; "
        "print(backend.prepare_metadata_for_build_wheel('out'))"
    )
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", build],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Deprecat" not in done.stderr and "deprecat" not in done.stderr, done.stderr
    info = tmp_path / "out" / done.stdout.split()[-1] / "METADATA"
    assert "License-Expression: Apache-2.0" in info.read_text()
