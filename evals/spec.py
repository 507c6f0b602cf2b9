"""The frozen identity of an evaluation run; its hash names the output folder."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.protocol import PARSER_VERSION

SPEC_VERSION = 1
# Context fields added after runs were already named by their spec's hash: left out of the
# spec at their defaults, so that an earlier run's folder stays the same run's folder.
LATER_FIELDS = {
    "protocol": "paravt",
    "prompt_mode": "agentic_general",
    "video_channel": "image_url",
}


@dataclass(frozen=True)
class EvalSpec:
    """What determines the model's outputs. Limit, concurrency and the scorer profile do not:
    a larger limit extends a run, and `rescore` applies another profile to the same samples.

    ``options["media_dir"]`` is present only when ``--media-dir`` is given (runs without it
    keep their hash): like ``data_dir`` it names the files the model is shown, since the
    media dir is searched first and another copy of a video can be another encoding.
    """

    task: str
    data_dir: str
    model: str
    context: dict[str, Any]  # graph Context fields (frames, pixel budgets, dispatch, ...)
    options: dict[str, Any] = field(default_factory=dict)  # task loader options
    votes: int = 1  # runs per sample; > 1 answers by majority vote (sample at temperature > 0)
    parser_version: str = PARSER_VERSION
    spec_version: int = SPEC_VERSION

    def __post_init__(self) -> None:
        context = {k: v for k, v in self.context.items() if LATER_FIELDS.get(k, self) != v}
        object.__setattr__(self, "context", context)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def hash(self) -> str:
        canonical = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]

    def folder(self, out_root: str | Path) -> Path:
        return Path(out_root) / f"{self.task}-{self.hash}"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvalSpec:
        return cls(**data)
