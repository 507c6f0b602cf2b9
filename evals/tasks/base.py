"""What a task is: a loader for the real on-disk format, a per-item scorer, an aggregate."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.sample import RecordError, Sample


@dataclass(frozen=True)
class LoadResult:
    """Everything a loader found, including what it could not use."""

    samples: list[Sample]
    errors: list[RecordError] = field(default_factory=list)  # malformed records
    missing_media: list[str] = field(default_factory=list)  # media paths that are not on disk
    sources: list[str] = field(default_factory=list)  # files read
    notes: dict[str, Any] = field(default_factory=dict)  # e.g. which format variant was read


# (response text, sample, profile) -> per-item metrics, e.g. {"correct": 1.0}
Scorer = Callable[[str, Sample, str], dict[str, float]]
# (samples, their per-item metrics, profile) -> benchmark metrics, e.g. {"accuracy": 0.61}
Aggregate = Callable[[Sequence[Sample], Sequence[Mapping[str, float]], str], dict[str, float]]


@dataclass(frozen=True)
class Task:
    name: str
    load: Callable[[Path], LoadResult]
    score: Scorer
    aggregate: Aggregate
    primary: str = "accuracy"  # the aggregate metric that compare and reports lead with
    profiles: tuple[str, ...] = ("official", "lmms_eval")
    category_fields: tuple[str, ...] = ()  # Sample.categories keys to break results down by
    context: dict[str, Any] = field(default_factory=dict)  # graph Context defaults for the task
    # The prompt for the overview frame times actually sampled (e.g. subtitles at those
    # times), for samples whose `extra` asks for it; None keeps `Sample.prompt`.
    render_prompt: Callable[[Sample, list[float]], str] | None = None
    description: str = ""
