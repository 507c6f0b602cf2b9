"""Pack what bench/gpu_grpo.py needs and the device machine lacks into one archive it can carry.

The device machine (``../.library/device``) has PyTorch, transformers, accelerate and the
other packages of ``requirements/device-image.txt``, and no registry. This resolves the
``[train]`` extra for its Python (3.12, x86_64 manylinux) with the image's pinned versions
as overrides, drops every package the image holds, downloads the remaining wheels, unpacks
them and writes them as one xz archive, ``.gpu-carry/site.tar.xz``, with a manifest beside
it. The carry limit is 64 MiB together with the tracked tree; PyAV's wheel alone is 35 MB
zipped and about 25 MB as xz, so the wheels do not fit as they are.

    python bench/gpu_carry.py       # here, where the registry is reachable
    python bench/gpu_carry.py --resolve-only   # what it would pack (CI runs this)
    # there, in one device call that carries .gpu-carry:
    bash bench/gpu_run.sh --steps 4

It refuses (exit 1), naming the sizes, when the archive and the tree exceed the limit.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGE = ROOT / "requirements" / "device-image.txt"
OUT = ROOT / ".gpu-carry"
CARRY_LIMIT = 64 * 2**20
PYTHON = "3.12"
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "any")


def canonical(name: str) -> str:
    """A distribution name as the registry compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def image_packages(path: Path = IMAGE) -> tuple[set[str], list[str]]:
    """(every package name the image holds, its ``name==version`` pins)."""
    names, pins = set(), []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        names.add(canonical(line.split("==", 1)[0]))
        if "==" in line:
            pins.append(line)
    return names, pins


def requirement_name(line: str) -> str:
    return canonical(re.split(r"[=<>!~;\[ ]", line.strip(), maxsplit=1)[0])


def missing_requirements(work: Path, python: str = PYTHON, image: Path = IMAGE) -> list[str]:
    """The pinned requirements of ``[train]`` on the device's Python that the image lacks."""
    names, pins = image_packages(image)
    overrides = work / "overrides.txt"
    overrides.write_text("\n".join(pins) + "\n")
    resolved = work / "resolved.txt"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "uv",
            "pip",
            "compile",
            str(ROOT / "pyproject.toml"),
            "--extra",
            "train",
            "--python-version",
            python,
            "--python-platform",
            "x86_64-manylinux_2_28",
            "--override",
            str(overrides),
            "--no-header",
            "--no-annotate",
            "--quiet",
            "-o",
            str(resolved),
        ],
        check=True,
    )
    wanted = [line.strip() for line in resolved.read_text().splitlines()]
    return [r for r in wanted if r and not r.startswith("#") and requirement_name(r) not in names]


def download(requirements: list[str], wheels: Path, python: str = PYTHON) -> list[Path]:
    """The wheels of `requirements` (no dependencies: the list is already resolved)."""
    listed = wheels.parent / "missing.txt"
    listed.write_text("\n".join(requirements) + "\n")
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            python,
            *platforms,
            "-r",
            str(listed),
            "-d",
            str(wheels),
        ],
        check=True,
    )
    return sorted(wheels.glob("*.whl"))


def unpack(wheel: Path, site: Path) -> None:
    """Unpack `wheel` as an installer would lay it out in site-packages (scripts left out)."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    for data in site.glob("*.data"):
        for kind in ("purelib", "platlib"):
            for item in (data / kind).glob("*") if (data / kind).is_dir() else ():
                shutil.move(str(item), site / item.name)
        shutil.rmtree(data)


def tracked_bytes() -> int:
    """The size of the tracked tree, which travels with every device call."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.split(b"\0")
    paths = [ROOT / f.decode() for f in files if f]
    return sum(p.stat().st_size for p in paths if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--python", default=PYTHON, help="the target machine's Python")
    parser.add_argument("--image", type=Path, default=IMAGE, help="what the target holds")
    parser.add_argument(
        "--resolve-only", action="store_true", help="list what would be packed; download nothing"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="paravt-gpu-carry-") as tmp:
        work = Path(tmp)
        try:
            requirements = missing_requirements(work, args.python, args.image)
            if args.resolve_only:
                print(f"{len(requirements)} packages to carry:", " ".join(requirements))
                return 0
            (work / "wheels").mkdir()
            wheels = download(requirements, work / "wheels", args.python)
        except subprocess.CalledProcessError as e:
            print(f"bench/gpu_carry.py: {e.cmd[2:5]} failed (its error is above)", file=sys.stderr)
            return 1
        site = work / "site"
        for wheel in wheels:
            unpack(wheel, site)
        args.out.mkdir(parents=True, exist_ok=True)
        archive = args.out / "site.tar.xz"
        with tarfile.open(archive, "w:xz") as tar:
            tar.add(site, arcname=".")
        unpacked = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
        wheel_bytes = sum(w.stat().st_size for w in wheels)
    tree = tracked_bytes()
    manifest = {
        "python": args.python,
        "image": str(args.image),
        "packages": requirements,
        "wheel_bytes": wheel_bytes,
        "unpacked_bytes": unpacked,
        "archive_bytes": archive.stat().st_size,
        "tracked_tree_bytes": tree,
        "carry_limit_bytes": CARRY_LIMIT,
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    total = tree + manifest["archive_bytes"]
    mib = lambda n: f"{n / 2**20:.1f} MiB"  # noqa: E731
    print(
        f"{len(requirements)} packages, {mib(wheel_bytes)} of wheels -> {archive} "
        f"{mib(manifest['archive_bytes'])}; with the tracked tree ({mib(tree)}) {mib(total)} "
        f"of {mib(CARRY_LIMIT)}"
    )
    if total > CARRY_LIMIT:
        print("over the device carry limit: the run would not start", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
