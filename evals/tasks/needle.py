"""The synthetic needle benchmark (rules in ``agents.benchmark``), with a held-out test split.

Videos and questions are generated deterministically from a seed into the data directory
(reused when already there), so the benchmark needs no download. Each video yields a
multiple-choice, a grounding and an open-ended item. Each needle is visible for at most 5%
of the video, so 4 overview frames usually miss it and the agent has to crop. The train
and test splits draw from disjoint seed ranges; no training step reads a test seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from agents import benchmark
from agents.scoring.accuracy import accuracy_reward
from agents.scoring.extract import extract_answer
from agents.scoring.intervals import parse_interval
from agents.scoring.letters import extract_letter
from agents.synthetic import SyntheticVideo
from evals.sample import Sample
from evals.tasks.base import LoadResult, Profile, Scored, Task

SPLIT_SEEDS = benchmark.SPLIT_SEEDS
CONTEXT = benchmark.GRAPH_SETTINGS
DEFAULT_SIZE = (benchmark.WIDTH, benchmark.HEIGHT)


def split_folder(data_dir: Path, split: str, size: tuple[int, int] = DEFAULT_SIZE) -> Path:
    """Where a split's videos and manifests live (named by the rules' version)."""
    if split not in SPLIT_SEEDS:
        raise ValueError(f"needle split {split!r}: choose one of {', '.join(SPLIT_SEEDS)}")
    suffix = "" if size == DEFAULT_SIZE else f"-{size[0]}x{size[1]}"
    return Path(data_dir) / f"needle-v{benchmark.VERSION}-{split}{suffix}"


def load(
    data_dir: Path,
    *,
    split: str = "test",
    n_videos: int = 60,
    max_minutes: int = benchmark.MINUTES[1],
    width: int = DEFAULT_SIZE[0],
    height: int = DEFAULT_SIZE[1],
    media_dir: str | Path | None = None,
) -> LoadResult:
    """Generate (or reuse) `n_videos` videos of the split. `max_minutes` below 10 only
    shortens videos for quick tests, and another `width`/`height` only serves decode-cost
    benchmarks: the benchmark's rules are 1 to 10 minutes at 128x96."""
    if media_dir is not None:
        raise ValueError(
            "needle generates its videos under --data-dir; --media-dir does not apply to it"
        )
    folder = split_folder(data_dir, split, (width, height))
    folder.mkdir(parents=True, exist_ok=True)
    samples, sources = [], []
    for i in range(n_videos):
        seed = SPLIT_SEEDS[split] + i
        video, items = benchmark.generate(
            folder, seed, minutes=(1, max_minutes), size=(width, height)
        )
        sources.append(str(folder / f"needle_{seed:07d}.json"))
        samples += [_to_sample(video, item, folder) for item in items]
    return LoadResult(samples=samples, sources=sources, notes={"split": split})


def _to_sample(video: SyntheticVideo, item, folder: Path) -> Sample:
    media = str(folder / Path(video.path).name)
    return Sample(
        id=f"s{video.seed}-{item.id}",
        media=media,
        question=item.question,
        prompt=benchmark.prompt_text(item),
        kind=item.kind,
        target=item.answer,
        options=tuple(item.options),
        cluster=f"video{video.seed}",
        categories={"kind": item.kind, "question": item.id.rsplit("-", 1)[-1]},
        extra={"target": dict(item.target), "duration": video.duration},
    )


PROFILES = {
    "official": Profile(
        "this project: agents/benchmark.py, scored by "
        "agents.scoring.accuracy.accuracy_reward (the RL reward's rule)",
        "as_is",
        "mean_score",
    ),
}
DEFAULT = "official"


def score(reply: str, sample: Sample, profile: str = DEFAULT) -> Scored:
    """The same `accuracy_reward` that PARA-GRPO trains on, per question kind."""
    if profile not in PROFILES:
        raise ValueError(f"needle has no profile {profile!r}; known: official")
    letters = "ABCDEFGH"[: len(sample.options)]
    answer = extract_answer(reply)
    if sample.kind == "multiple_choice":
        correct = (
            accuracy_reward(reply, kind="multiple_choice", target=sample.target, letters=letters)
            or 0.0
        )
        found = extract_letter(answer, "robust", letters=letters)
        metrics = {"score": correct, "correct": correct, "extracted": float(bool(found))}
        return Scored(metrics, answer, found)
    if sample.kind == "grounding":
        gold = sample.extra["target"]
        overlap = (
            accuracy_reward(reply, kind="grounding", target=(gold["start"], gold["end"])) or 0.0
        )
        metrics = {
            "score": overlap,
            "iou": overlap,
            "r@0.3": float(overlap >= 0.3),
            "r@0.5": float(overlap >= 0.5),
            "r@0.7": float(overlap >= 0.7),
        }
        pair = parse_interval(answer)
        return Scored(metrics, answer, list(pair) if pair else None)
    f1 = accuracy_reward(reply, kind="open_ended", target=sample.target) or 0.0
    em = accuracy_reward(reply, kind="open_ended", target=sample.target, open_metric="exact")
    return Scored({"score": f1, "f1": f1, "em": em or 0.0}, answer, answer)


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = DEFAULT
) -> dict[str, float]:
    """Accuracy on multiple choice, mIoU and R@k on grounding, token F1 on open-ended."""

    def mean(kind: str, key: str) -> float | None:
        values = [m[key] for s, m in zip(samples, metrics, strict=True) if s.kind == kind]
        return round(sum(values) / len(values), 4) if values else None

    out = {
        "mc_accuracy": mean("multiple_choice", "correct"),
        "grounding_miou": mean("grounding", "iou"),
        "grounding_r@0.5": mean("grounding", "r@0.5"),
        "open_f1": mean("open_ended", "f1"),
        "open_em": mean("open_ended", "em"),
        "mean_score": round(sum(m["score"] for m in metrics) / len(metrics), 4)
        if metrics
        else None,
    }
    return {k: v for k, v in out.items() if v is not None}


TASK = Task(
    name="needle",
    load=load,
    score=score,
    aggregate=aggregate,
    profiles=PROFILES,
    default_profile=DEFAULT,
    category_fields=("kind", "question"),
    context=dict(CONTEXT),
    description="Synthetic needle videos generated from a seed (this project's benchmark).",
)
