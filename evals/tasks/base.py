"""What a task is: a loader for the real on-disk format, a per-item scorer, an aggregate."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.sample import RecordError, Sample
from evals.scorers.base import Profile, Scored

__all__ = ["LoadResult", "Profile", "Scored", "Task"]


@dataclass(frozen=True)
class LoadResult:
    """Everything a loader found, including what it could not use."""

    samples: list[Sample]
    errors: list[RecordError] = field(default_factory=list)  # malformed records
    missing_media: list[str] = field(default_factory=list)  # media paths that are not on disk
    sources: list[str] = field(default_factory=list)  # files read
    notes: dict[str, Any] = field(default_factory=dict)  # e.g. which format variant was read


# (final reply, sample, profile) -> the item's score
Scorer = Callable[[str, Sample, str], Scored]
# (samples, their per-item metrics, profile) -> benchmark metrics, named and scaled as the
# profile's harness reports them (e.g. lmms-eval's {"videomme_perception_score": 61.3})
Aggregate = Callable[[Sequence[Sample], Sequence[Mapping[str, float]], str], dict[str, float]]


@dataclass(frozen=True)
class Task:
    name: str
    load: Callable[[Path], LoadResult]
    score: Scorer
    aggregate: Aggregate
    profiles: Mapping[str, Profile]
    default_profile: str
    category_fields: tuple[str, ...] = ()  # Sample.categories keys to break results down by
    context: dict[str, Any] = field(default_factory=dict)  # graph Context defaults for the task
    # The prompt for the overview frame times actually sampled (e.g. subtitles at those
    # times), for samples whose `extra` asks for it; None keeps `Sample.prompt`.
    render_prompt: Callable[[Sample, list[float]], str] | None = None
    # Scores every item at once, in doc order, for profiles whose result depends on the
    # order items are scored in (a seeded random fallback); None: `score` item by item.
    score_all: Callable[[Sequence[str], Sequence[Sample], str], list[Scored]] | None = None
    description: str = ""

    def score_in_order(
        self, replies: Sequence[str], samples: Sequence[Sample], profile: str
    ) -> list[Scored]:
        """Every item's score in doc order, as the profile's harness scores a whole run."""
        if self.score_all is not None:
            return self.score_all(replies, samples, profile)
        return [self.score(r, s, profile) for r, s in zip(replies, samples, strict=True)]

    def profile(self, name: str | None = None) -> Profile:
        """The named profile (the task's default for None); ValueError for an unknown name."""
        name = name or self.default_profile
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(self.profiles)
            raise ValueError(f"{self.name} has no profile {name!r}; known: {known}") from None

    def primary_for(self, profile: str | None = None) -> str:
        return self.profile(profile).primary

    @property
    def primary(self) -> str:
        """The default profile's lead metric."""
        return self.primary_for(None)
