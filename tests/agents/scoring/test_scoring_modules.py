"""agents.scoring as a package: doctests run, stdlib-only imports, a docstring on every function."""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MODULES = [
    "agents.scoring.extract",
    "agents.scoring.letters",
    "agents.scoring.intervals",
    "agents.scoring.text",
    "agents.scoring.accuracy",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0


@pytest.mark.parametrize("name", MODULES)
def test_public_functions_have_docstrings_with_examples(name):
    module = importlib.import_module(name)
    public = [
        obj
        for attr, obj in vars(module).items()
        if inspect.isfunction(obj) and obj.__module__ == name and not attr.startswith("_")
    ]
    assert public
    for function in public:
        assert function.__doc__ and ">>>" in function.__doc__, function.__name__


def test_scoring_imports_only_the_standard_library_and_the_protocol():
    offenders = []
    for path in sorted((ROOT / "agents" / "scoring").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                allowed = name == "agents.protocol" or name.startswith("agents.scoring")
                if top != "__future__" and top not in sys.stdlib_module_names and not allowed:
                    offenders.append(f"{path.name} imports {name}")
    assert offenders == []
