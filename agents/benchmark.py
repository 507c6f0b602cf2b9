"""The needle benchmark's fixed rules: video lengths, needle lengths, vocabulary, questions.

Every rule is fixed here, before any model is trained, and is the same for runs with and
without tools:

- a video lasts a whole number of minutes, 1 to 10, at 1 frame per second (so every frame
  time is a whole second), 128x96 pixels;
- it holds 1 to 3 needles: large shapes of distinct salient colours and distinct shapes,
  no text, each visible for 3% to 5% of the video (never more than 5%), one per equal
  segment of the video, so 4 uniformly spaced overview frames catch a needle at most
  about 20% of the time;
- each video asks three questions: one multiple-choice (which colour, which shape, how
  many, or which came first), one grounding (when does X appear) and one open-ended
  (colour and shape of the last needle).

The train and test splits draw seeds from disjoint ranges (`SPLIT_SEEDS`); `noise` below 1
(a calmer background) is for training curricula only, never for evaluation.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from agents.synthetic import (
    Needle,
    QAItem,
    SyntheticVideo,
    make_video,
    read_manifest,
    write_manifest,
)

VERSION = 2
COLOURS: tuple[str, ...] = ("red", "green", "blue", "yellow")
SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "cross")
FPS = 1.0
WIDTH, HEIGHT = 128, 96
MIN_FRACTION, MAX_FRACTION = 0.03, 0.05  # of the video's length, per needle
MAX_NEEDLES = 3
MINUTES = (1, 10)
MC_KINDS: tuple[str, ...] = ("colour", "shape", "count", "order")
LETTERS = "ABCD"
#: The graph settings (``graphs.context.Context`` fields) the benchmark runs with: 4 overview
#: frames, frames at the videos' own 128x96 size, and 12 frames per window, which catch every
#: needle in a quarter of the video (12 frames per quarter: one every 2.1% of the video).
GRAPH_SETTINGS = {
    "overview_frames": 4,
    "overview_max_pixels": WIDTH * HEIGHT,
    "crop_max_pixels": WIDTH * HEIGHT,
    "crop_max_frames": 12,
    "max_parallel": 4,
}
SPLIT_SEEDS = {"train": 0, "test": 1_000_000}  # disjoint seed ranges: no test seed is trained on


def plan(seed: int, *, minutes: tuple[int, int] = MINUTES) -> tuple[float, tuple[Needle, ...]]:
    """The duration and needles of the video of `seed`; the same seed, the same plan."""
    lo, hi = minutes
    if not 1 <= lo <= hi:
        raise ValueError(f"minutes must be 1 <= low <= high, got {minutes}")
    rng = np.random.default_rng([VERSION, seed])
    duration = 60 * int(rng.integers(lo, hi + 1))
    n = int(rng.integers(1, MAX_NEEDLES + 1))
    colours = rng.permutation(COLOURS)[:n]
    shapes = rng.permutation(SHAPES)[:n]
    segment = duration / n
    needles = []
    for i in range(n):
        most = math.floor(MAX_FRACTION * duration)  # whole frames: at most 5%, by floor
        least = min(most, max(2, math.ceil(MIN_FRACTION * duration)))
        length = int(rng.integers(least, most + 1))
        first = math.ceil(i * segment) + 1  # one clear frame at each end of the segment
        last = math.floor((i + 1) * segment) - 1 - length
        start = int(rng.integers(first, last + 1))
        needles.append(
            Needle(float(start), float(start + length), str(colours[i]), str(shapes[i]), "")
        )
    return float(duration), tuple(needles)


def _options(rng: np.random.Generator, values, right: str) -> tuple[tuple[str, ...], str]:
    choices = [str(v) for v in rng.permutation(values)]
    return tuple(f"{LETTERS[k]}. {c}" for k, c in enumerate(choices)), LETTERS[choices.index(right)]


def questions(video: SyntheticVideo, *, seed: int) -> list[QAItem]:
    """One multiple-choice, one grounding and one open-ended item about `video`."""
    rng = np.random.default_rng([VERSION, seed, 1])
    stem, needles = Path(video.path).stem, video.needles
    kinds = [k for k in MC_KINDS if k != "order" or len(needles) > 1]
    mc = kinds[int(rng.integers(len(kinds)))]
    target = needles[int(rng.integers(len(needles)))]
    if mc == "colour":
        question = f"What colour is the {target.shape} that appears in the video?"
        options, letter = _options(rng, COLOURS, target.color)
    elif mc == "shape":
        question = f"What shape is the {target.color} object that appears in the video?"
        options, letter = _options(rng, SHAPES, target.shape)
    elif mc == "count":
        question = "How many coloured shapes appear in the video?"
        options = tuple(f"{LETTERS[k]}. {k + 1}" for k in range(4))
        letter = LETTERS[len(needles) - 1]
    else:
        question = "Which colour is the shape that appears first in the video?"
        options, letter = _options(rng, COLOURS, needles[0].color)
    grounded = needles[int(rng.integers(len(needles)))]
    last = needles[-1]
    return [
        QAItem(f"{stem}-mc-{mc}", "multiple_choice", question, options, letter, {"letter": letter}),
        grounding_item(stem, grounded),
        QAItem(
            f"{stem}-open",
            "open_ended",
            "What are the colour and the shape of the last coloured shape in the video?",
            (),
            f"{last.color} {last.shape}",
            {"text": f"{last.color} {last.shape}"},
        ),
    ]


def grounding_item(stem: str, needle: Needle) -> QAItem:
    """The grounding question about `needle` of the video `stem`."""
    return QAItem(
        f"{stem}-ground",
        "grounding",
        f"When does the {needle.color} {needle.shape} appear? Give start and end in seconds.",
        (),
        f"{needle.start:g}-{needle.end:g}",
        {"start": needle.start, "end": needle.end},
    )


def generate(
    folder: str | os.PathLike,
    seed: int,
    *,
    noise: float = 1.0,
    minutes: tuple[int, int] = MINUTES,
    size: tuple[int, int] = (WIDTH, HEIGHT),
) -> tuple[SyntheticVideo, list[QAItem]]:
    """The video and questions of `seed` in `folder` (generated once, then read back).
    A `size` other than 128x96 is for decode-cost benchmarks only."""
    manifest = Path(folder) / f"needle_{seed:07d}.json"
    if manifest.exists():
        return read_manifest(manifest)
    duration, needles = plan(seed, minutes=minutes)
    video = make_video(
        manifest.with_suffix(".mp4"),
        seed=seed,
        duration=duration,
        fps=FPS,
        width=size[0],
        height=size[1],
        needles=needles,
        noise=noise,
    )
    items = questions(video, seed=seed)
    write_manifest(video, items, manifest)
    return video, items


def prompt_text(item: QAItem) -> str:
    """The question block the benchmark sends: the question, then its options, one per line."""
    return "\n".join([item.question, *item.options])


def visible_at(needles, t: float) -> list[Needle]:
    """The needles shown in the frame at time `t`."""
    return [n for n in needles if n.start <= t < n.end]
