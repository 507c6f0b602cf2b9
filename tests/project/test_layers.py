"""Import direction (agents <- graphs <- {training, evals} <- {cli, app.py, lmms_plugin}),
test doubles (testing/) that the product never imports, and heavy-import owners."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agents", "graphs", "training", "evals", "serving", "lmms_plugin", "cli", "testing")
PRODUCT = tuple(p for p in PACKAGES if p != "testing")

# What each layer may import from this project. serving/ is the local model runtime (torch):
# it imports nothing of ours but agents, and training builds on it (same prompt rendering
# and generation for rollouts as for serving).
ALLOWED = {
    "agents": {"agents"},
    "serving": {"agents", "serving"},
    "graphs": {"agents", "graphs"},
    "training": {"agents", "graphs", "serving", "training"},
    "evals": {"agents", "graphs", "evals"},
    # lmms-eval's model: beside app.py at the top, it starts the local server as app.py does;
    # nothing of ours imports it (lmms-eval finds it through the entry point)
    "lmms_plugin": {"agents", "graphs", "evals", "serving", "lmms_plugin"},
    # the command line's own pieces, beside app.py (which alone imports them)
    "cli": {"agents", "graphs", "cli"},
    # test doubles: they speak the product's wire formats, and nothing of the product imports them
    "testing": {"agents", "serving", "testing"},
}

# Third-party modules with a single owner (none for openai: the client speaks plain HTTP through
# agents/client/transport.py; the official SDK is a dev dependency, for tests of the servers).
OWNERS = {
    "openai": set(),
    "av": {"agents/media/video.py", "agents/media/video_probe.py"},  # decoding, and what a file is
    "decord": {"agents/media/video.py"},
    "sqlite_utils": {"graphs/store/sqlite_board.py"},
    # the board and checkpoints in PostgreSQL: the driver, its pool, LangGraph's saver
    "psycopg": {"graphs/store/postgres/"},
    "psycopg_pool": {"graphs/store/postgres/"},
    "langgraph.checkpoint.postgres": {"graphs/store/postgres/"},
    "langgraph": {"graphs/", "training/", "evals/", "app.py"},
    "langchain_core": {"graphs/", "training/", "evals/", "app.py"},
    "torch": {"training/", "serving/"},
    "transformers": {"training/", "serving/"},
    "trl": {"training/"},
    "lmms_eval": {"lmms_plugin/model.py", "lmms_plugin/manifest.py"},  # its own environment
}
# Encoding synthetic test videos is not decoding; the generator writes with PyAV.
EXTRA_OWNERS = {"av": {"agents/synthetic.py"}}


def python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else []


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def owned_by(relative: str, owners: set[str]) -> bool:
    return any(relative == o or (o.endswith("/") and relative.startswith(o)) for o in owners)


@pytest.mark.parametrize("package", PACKAGES)
def test_layers_import_only_downwards(package):
    offenders = []
    for path in python_files(package):
        for module in imported_modules(path):
            top = module.split(".")[0]
            if (top in PACKAGES or top == "app") and top not in ALLOWED[package]:
                offenders.append(f"{path.relative_to(ROOT)} imports {module}")
    assert offenders == []


def test_the_product_never_imports_the_test_doubles():
    offenders = [
        f"{path.relative_to(ROOT)} imports {module}"
        for package in (*PRODUCT, "app.py")
        for path in ([ROOT / package] if package.endswith(".py") else python_files(package))
        for module in imported_modules(path)
        if module.split(".")[0] == "testing"
    ]
    assert offenders == []


def test_only_app_imports_the_cli_package():
    offenders = [
        f"{path.relative_to(ROOT)} imports {module}"
        for package in PACKAGES
        if package != "cli"
        for path in python_files(package)
        for module in imported_modules(path)
        if module.split(".")[0] == "cli"
    ]
    assert offenders == []


def test_nothing_imports_app():
    offenders = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in python_files(package)
        if "app" in {m.split(".")[0] for m in imported_modules(path)}
    ]
    assert offenders == []


def test_heavy_libraries_have_one_owner():
    offenders = []
    for package in (*PACKAGES, "app.py"):
        paths = [ROOT / package] if package.endswith(".py") else python_files(package)
        for path in paths:
            relative = str(path.relative_to(ROOT))
            for module in imported_modules(path):
                for name in {module.split(".")[0], *_owned_prefixes(module)}:
                    owners = OWNERS.get(name, set()) | EXTRA_OWNERS.get(name, set())
                    if name in OWNERS and not owned_by(relative, owners):
                        offenders.append(f"{relative} imports {module}")
    assert offenders == []


def _owned_prefixes(module: str) -> list[str]:
    """The dotted prefixes of ``module`` that have an owner of their own (a package's part)."""
    parts = module.split(".")
    return [p for p in (".".join(parts[:i]) for i in range(2, len(parts) + 1)) if p in OWNERS]


def test_the_checker_sees_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import openai\nfrom graphs.store.sqlite_board import Board\n")
    assert imported_modules(bad) == {"openai", "graphs.store.sqlite_board"}


def test_a_package_part_has_its_own_owner():
    assert _owned_prefixes("langgraph.checkpoint.postgres.aio") == ["langgraph.checkpoint.postgres"]
    assert _owned_prefixes("langgraph.graph") == []
    assert not owned_by("graphs/store/sqlite_board.py", OWNERS["langgraph.checkpoint.postgres"])
    assert owned_by("graphs/store/postgres/board.py", OWNERS["psycopg"])
    assert not owned_by("app.py", OWNERS["psycopg"])
