"""The regime a checkpoint was trained for (frame counts, frame size, crops, token caps), kept
beside its weights in ``regime.json`` and shown by the server in its ``GET /v1/models`` entry.

A small model trained on one input regime writes garbage far outside it (a 128x96 model shown
64 overview frames writes 2048 tokens of colour words). The regime travels with the
checkpoint so that a caller can default to it and warn when a run leaves it
(``graphs.regime``). Plain JSON, no torch: the server, the rebuild and tests read it alike.

    >>> r = Regime(overview_frames=(4, 8, 16), default_overview_frames=4)
    >>> Regime.from_dict(r.to_dict()) == r
    True
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from agents import benchmark

REGIME_FILE = "regime.json"
_NEEDLE = benchmark.GRAPH_SETTINGS  # the defaults: the needle benchmark paravt-nano learns


@dataclass(frozen=True)
class Regime:
    """What a checkpoint saw in training; each field maps onto a graph ``Context`` knob."""

    overview_frames: tuple[int, ...]  # overview frame counts seen in training
    default_overview_frames: int  # the count to run with when the caller names none
    frame_width: int = benchmark.WIDTH  # pixels of the frames it was trained on
    frame_height: int = benchmark.HEIGHT
    crop_max_frames: int = _NEEDLE["crop_max_frames"]  # frames per sub-agent window
    crop_fps: float = benchmark.FPS
    max_parallel: int = _NEEDLE["max_parallel"]  # crop calls per turn in its traces
    max_new_tokens: int = 256  # longest main-agent turn it needs (its turns are far shorter)
    summary_max_tokens: int = 48  # longest sub-agent note it needs
    think_prefix: bool = True  # trained with the Think Prefix prefilled
    tool_result: str = "summary"  # what its tool responses held
    trained_on: str = ""  # free text: the data it was trained on
    protocol: str = "paravt"  # how its requests were built (agents.protocols)
    video_input: bool = False  # its server decodes a video_url itself (this runtime does not)

    @property
    def max_pixels(self) -> int:
        return self.frame_width * self.frame_height

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["overview_frames"] = list(self.overview_frames)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Regime:
        """The regime in `data`; unknown keys (written by a later version) are ignored."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["overview_frames"] = tuple(int(n) for n in values["overview_frames"])
        return cls(**values)


def write_regime(folder: str | Path, regime: Regime) -> Path:
    """Write `regime` into the checkpoint `folder` as ``regime.json``."""
    path = Path(folder) / REGIME_FILE
    path.write_text(json.dumps(regime.to_dict(), indent=2) + "\n")
    return path


def read_regime(folder: str | Path) -> Regime | None:
    """The regime recorded in the checkpoint `folder`, or None when it records none.

    >>> read_regime("/nonexistent") is None
    True
    """
    path = Path(folder) / REGIME_FILE
    if not path.is_file():
        return None
    return Regime.from_dict(json.loads(path.read_text()))
