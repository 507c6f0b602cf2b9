"""Readable names for run folders, for plots and comparisons (a folder's name is only a hash).

A run is named, in this order:

1. by the board-study configuration (``evals.study_configs.STUDY_CONFIGS``: ``single``,
   ``two_agent``, ``vote5``, ``verified``, ...) whose settings it has: every knob any
   configuration sets (dispatch, board mode, scanner, length gate, temperature, votes) equals that
   configuration's value, or the task's default for knobs the configuration leaves alone;
2. otherwise by the settings that set it apart from the other runs shown with it, e.g.
   ``board_mode=verified, max_turns=2`` (at most :data:`MAX_SETTINGS` of them);
3. otherwise (one run, or no ``spec.json``) by its folder name.

Runs that would share a name get the settings that tell them apart, or their spec hash,
appended: ``verified (max_turns=2)``, ``verified (1a2b3c)``. The folder and spec hash always
travel beside the name (:func:`run_identity`), so a label never hides which run it is.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.spec import EvalSpec
from evals.study_configs import STUDY_CONFIGS
from graphs.context import Context

MAX_SETTINGS = 3
"""Most distinguishing settings written into one label; more are summarised as ``+N``."""


def read_spec(folder: str | Path) -> EvalSpec | None:
    """The run's frozen spec, or None for a folder without ``spec.json``."""
    path = Path(folder) / "spec.json"
    if not path.is_file():
        return None
    return EvalSpec.from_json(json.loads(path.read_text(encoding="utf-8")))


def settings(spec: EvalSpec) -> dict[str, Any]:
    """Every setting that identifies a run, flat: task, model, votes, graph knobs (filled
    with the task's defaults where the spec leaves them out) and ``option.*`` loader options."""
    context = {**dataclasses.asdict(_task_defaults(spec.task)), **spec.context}
    flat = {"task": spec.task, "model": spec.model, "data_dir": spec.data_dir}
    flat |= {"votes": spec.votes, **context}
    flat |= {f"option.{k}": v for k, v in sorted(spec.options.items())}
    return flat


def study_arm(spec: EvalSpec) -> str | None:
    """The board-study configuration whose settings the spec has, if any."""
    keys = sorted({k for config in STUDY_CONFIGS.values() for k in config.context})
    mine = settings(spec)
    defaults = dataclasses.asdict(_task_defaults(spec.task))
    for name, config in STUDY_CONFIGS.items():
        wanted = {k: config.context.get(k, defaults[k]) for k in keys}
        if config.votes == spec.votes and all(mine[k] == v for k, v in wanted.items()):
            return name
    return None


def label_runs(folders: Sequence[str | Path]) -> list[str]:
    """One distinct readable name per run folder, in order (rules in the module docstring).

    >>> label_runs(["runs/needle-1a2b3c4d5e6f"])  # no spec.json there: the folder name
    ['needle-1a2b3c4d5e6f']
    """
    paths = [Path(f) for f in folders]
    specs = [read_spec(p) for p in paths]
    labels = []
    for path, spec in zip(paths, specs, strict=True):
        arm = study_arm(spec) if spec is not None else None
        labels.append(arm or _distinguishing(spec, specs) or path.name)
    for label in sorted({x for x in labels if labels.count(x) > 1}):
        same = [i for i, x in enumerate(labels) if x == label]
        group = [specs[i] for i in same]
        for i in same:
            extra = _distinguishing(specs[i], group) if specs[i] is not None else None
            labels[i] = f"{label} ({extra or _short_hash(specs[i], paths[i])})"
    return labels


def run_identity(folder: str | Path, label: str) -> dict[str, str | None]:
    """What names a run beside its label: spec hash (None without ``spec.json``) and folder."""
    spec = read_spec(folder)
    return {"label": label, "spec_hash": spec.hash if spec else None, "folder": str(folder)}


def _distinguishing(spec: EvalSpec | None, specs: Sequence[EvalSpec | None]) -> str | None:
    """``key=value`` for the settings whose values differ among ``specs`` (None if none do)."""
    known = [settings(s) for s in specs if s is not None]
    if spec is None or len(known) < 2:
        return None
    mine = settings(spec)
    keys = [k for k in mine if any(other.get(k, _MISSING) != mine[k] for other in known)]
    if not keys:
        return None
    text = ", ".join(f"{k}={_show(mine[k])}" for k in keys[:MAX_SETTINGS])
    return text + (f", +{len(keys) - MAX_SETTINGS}" if len(keys) > MAX_SETTINGS else "")


def _task_defaults(task: str) -> Context:
    from evals.tasks import TASKS  # the registry imports every task module

    return Context(**TASKS[task].context) if task in TASKS else Context()


def _short_hash(spec: EvalSpec | None, path: Path) -> str:
    return spec.hash[:6] if spec is not None else str(path)


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str) and "/" in value:
        return Path(value).name  # data_dir, model paths: the last part reads best
    return str(value) if not isinstance(value, Mapping) else json.dumps(value, sort_keys=True)


_MISSING = object()
