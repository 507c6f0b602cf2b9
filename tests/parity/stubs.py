"""Import a reference harness's scoring files offline, with the heavy imports they never use
for scoring (torch, decord, datasets, cv2, PIL, openai, ...) replaced by empty modules.

Used only by :mod:`tests.parity.run_references`, which runs under a Python that has the
small pure-Python packages the references import at module level (see tests/parity/README.md).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import types
from collections.abc import Iterator
from pathlib import Path

HEAVY = (
    "torch",
    "torchvision",
    "torchvision.transforms",
    "torch.utils",
    "torch.utils.data",
    "decord",
    "cv2",
    "datasets",
    "PIL",
    "PIL.Image",
    "openai",
    "transformers",
    "qwen_vl_utils",
    "qwen_vl_utils.vision_process",
    "dotenv",
    "pydantic",
    "tqdm",
    "areal",
    "areal.utils",
)


class _Anything:
    """Stands in for any attribute of a stubbed module: callable, subclassable, indexable."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __getattr__(self, name):
        return _Anything()

    def __mro_entries__(self, bases):
        return (object,)


def stub_module(name: str, **attrs) -> types.ModuleType:
    """Install an empty module under ``name`` (and its parents) whose unknown attributes are
    harmless placeholders."""
    module = types.ModuleType(name)
    module.__getattr__ = lambda attr: _Anything()  # type: ignore[method-assign]
    module.__path__ = []  # a package, so "import a.b" works
    for key, value in attrs.items():
        setattr(module, key, value)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        if parent not in sys.modules:
            stub_module(parent)
        setattr(sys.modules[parent], child, module)
    return module


def stub_heavy() -> None:
    for name in HEAVY:
        if name not in sys.modules:
            stub_module(name)
    sys.modules["torch.utils.data"].Dataset = object


def package(name: str, folder: Path) -> types.ModuleType:
    """A namespace package over a real folder, without running its ``__init__.py``."""
    module = types.ModuleType(name)
    module.__path__ = [str(folder)]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return module


def load_file(path: Path, name: str) -> types.ModuleType:
    """Execute one reference source file as module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def captured() -> Iterator[io.StringIO]:
    """Collect what the reference prints (several report only on stdout)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        yield buffer
