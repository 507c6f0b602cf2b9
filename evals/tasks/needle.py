"""The synthetic needle benchmark: short coloured shapes with words, at known times.

Videos and questions are generated deterministically from a seed into the data directory
(reused when already there), so the benchmark needs no download. Each video yields a
multiple-choice, a grounding and an open-ended item; the needle lasts a few seconds, so a
handful of overview frames usually misses it and the agent has to crop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from agents.scoring.accuracy import accuracy_reward
from agents.scoring.extract import extract_answer
from agents.scoring.letters import extract_letter
from agents.synthetic import SyntheticVideo, make_questions, make_video, read_manifest
from agents.synthetic import write_manifest as write_video_manifest
from evals.sample import Sample
from evals.tasks.base import LoadResult, Task

SPLIT_SEEDS = {"train": 0, "test": 1_000_000}  # disjoint seed ranges per split


def load(
    data_dir: Path,
    *,
    split: str = "test",
    n_videos: int = 12,
    min_duration: float = 60.0,
    max_duration: float = 180.0,
    needle_seconds: float = 3.0,
    width: int = 320,
    height: int = 240,
) -> LoadResult:
    """Generate (or reuse) `n_videos` videos of the split under `data_dir/needle-<split>/`."""
    if split not in SPLIT_SEEDS:
        raise ValueError(f"needle split {split!r}: choose one of {', '.join(SPLIT_SEEDS)}")
    folder = Path(data_dir) / f"needle-{split}"
    folder.mkdir(parents=True, exist_ok=True)
    samples, sources = [], []
    for i in range(n_videos):
        seed = SPLIT_SEEDS[split] + i
        manifest = folder / f"needle_{seed:07d}.json"
        if manifest.exists():
            video, items = read_manifest(manifest)
        else:
            span = max_duration - min_duration
            duration = round(min_duration + span * ((seed * 7919) % 1000) / 1000, 1)
            video = make_video(
                folder / f"needle_{seed:07d}.mp4",
                seed=seed,
                duration=duration,
                n_needles=1,
                needle_seconds=needle_seconds,
            )
            items = make_questions(video, seed=seed)
            write_video_manifest(video, items, manifest)
        sources.append(str(manifest))
        samples += [_to_sample(video, item, folder) for item in items]
    return LoadResult(samples=samples, sources=sources, notes={"split": split})


def _to_sample(video: SyntheticVideo, item, folder: Path) -> Sample:
    media = str(folder / Path(video.path).name)
    return Sample(
        id=f"s{video.seed}-{item.id}",
        media=media,
        question=item.question,
        prompt="\n".join([item.question, *item.options]),
        kind=item.kind,
        target=item.answer,
        options=tuple(item.options),
        cluster=f"video{video.seed}",
        categories={"kind": item.kind},
        extra={"target": dict(item.target), "duration": video.duration},
    )


def score(response: str, sample: Sample, profile: str = "official") -> dict[str, float]:
    """The same `accuracy_reward` that PARA-GRPO trains on, per question kind."""
    letters = "ABCDEFGH"[: len(sample.options)]
    if sample.kind == "multiple_choice":
        correct = (
            accuracy_reward(response, kind="multiple_choice", target=sample.target, letters=letters)
            or 0.0
        )
        found = extract_letter(extract_answer(response), "robust", letters=letters)
        return {"score": correct, "correct": correct, "extracted": float(bool(found))}
    if sample.kind == "grounding":
        gold = sample.extra["target"]
        overlap = (
            accuracy_reward(response, kind="grounding", target=(gold["start"], gold["end"])) or 0.0
        )
        return {
            "score": overlap,
            "iou": overlap,
            "r@0.3": float(overlap >= 0.3),
            "r@0.5": float(overlap >= 0.5),
            "r@0.7": float(overlap >= 0.7),
        }
    f1 = accuracy_reward(response, kind="open_ended", target=sample.target) or 0.0
    em = accuracy_reward(response, kind="open_ended", target=sample.target, open_metric="exact")
    return {"score": f1, "f1": f1, "em": em or 0.0}


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = "official"
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
    primary="mean_score",
    profiles=("official",),
    category_fields=("kind",),
    context={"overview_frames": 4},
    description="Synthetic needle videos generated from a seed (this project's benchmark).",
)
