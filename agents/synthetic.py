"""Deterministic synthetic "needle" videos and their ground-truth questions, for tests and evals."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

import av
import cv2
import numpy as np

from agents.question import Question

COLORS: dict[str, tuple[int, int, int]] = {
    "red": (255, 0, 0),
    "green": (0, 200, 0),
    "blue": (0, 0, 255),
    "yellow": (255, 255, 0),
    "magenta": (255, 0, 255),
    "cyan": (0, 255, 255),
    "white": (255, 255, 255),
    "orange": (255, 140, 0),
}
SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "star", "cross")
WORDS: tuple[str, ...] = (
    "APPLE", "RIVER", "TIGER", "CLOUD", "PIANO", "LEMON", "ROBOT", "MANGO",
    "OCEAN", "EAGLE", "CANDLE", "ROCKET", "GARDEN", "CASTLE", "PLANET", "WINTER",
)  # fmt: skip  # a table: clearer in rows
MANIFEST_VERSION = 1
X264_OPTIONS = {"crf": "28", "preset": "fast", "x264-params": "mbtree=0"}  # mbtree made runs differ


@dataclass(frozen=True)
class Needle:
    """A shape with a word on it, visible in frames with start <= t < end (seconds)."""

    start: float
    end: float
    color: str
    shape: str
    word: str


@dataclass(frozen=True)
class SyntheticVideo:
    """A generated video file and the needles it contains."""

    path: str
    seed: int
    duration: float
    fps: float
    width: int
    height: int
    needles: tuple[Needle, ...]


@dataclass(frozen=True)
class QAItem:
    """One question about a synthetic video with its machine-readable answer."""

    id: str
    kind: str  # "multiple_choice" | "grounding" | "open_ended"
    question: str
    options: tuple[str, ...]  # "A. red" style; empty unless multiple choice
    answer: str  # letter, "start-end" seconds text, or free text
    target: dict  # {"letter": "B"} | {"start": s, "end": e} | {"text": "..."}

    @property
    def ask(self) -> Question:
        """The question as the agent is asked it (the default question block)."""
        return Question(self.question, self.options, self.kind)  # type: ignore[arg-type]


def _plan_needles(
    rng: np.random.Generator, duration: float, fps: float, n: int, seconds: float
) -> tuple[Needle, ...]:
    """Place n non-overlapping needles on the frame grid, one per equal segment of the video."""
    if not 0 <= n <= min(len(COLORS), len(WORDS)):
        raise ValueError(f"n_needles={n}: use 0 to {len(COLORS)} (one distinct colour per needle)")
    segment = duration / max(n, 1)
    span = int(np.ceil(seconds * fps))  # frames each needle is visible
    gap = max(1, round(0.5 * fps))  # frames kept clear at both ends of a segment
    colors = rng.permutation(list(COLORS))[:n]
    words = rng.permutation(list(WORDS))[:n]
    needles = []
    for i in range(n):
        lo = int(np.ceil(i * segment * fps)) + gap
        hi = int(np.floor((i + 1) * segment * fps)) - gap - span
        if hi < lo:
            raise ValueError(
                f"{n} needles of {seconds} s do not fit in {duration} s; "
                "use a longer duration, fewer needles or a shorter needle_seconds"
            )
        first = int(rng.integers(lo, hi + 1))
        needles.append(
            Needle(
                start=round(first / fps, 6),
                end=round((first + span) / fps, 6),
                color=str(colors[i]),
                shape=SHAPES[int(rng.integers(len(SHAPES)))],
                word=str(words[i]),
            )
        )
    return tuple(needles)


def _shape_points(shape: str, cx: int, cy: int, r: int) -> np.ndarray:
    """Polygon vertices for the polygonal shapes, as int32 (N, 2)."""
    if shape == "square":
        s = int(r * 0.85)
        pts = [(cx - s, cy - s), (cx + s, cy - s), (cx + s, cy + s), (cx - s, cy + s)]
    elif shape == "triangle":
        pts = [
            (cx, cy - r),
            (cx + int(r * 0.95), cy + int(r * 0.7)),
            (cx - int(r * 0.95), cy + int(r * 0.7)),
        ]
    elif shape == "star":
        angles = -np.pi / 2 + np.arange(10) * np.pi / 5
        radii = np.where(np.arange(10) % 2 == 0, r, r * 0.5)
        pts = np.stack([cx + radii * np.cos(angles), cy + radii * np.sin(angles)], axis=1)
    else:  # cross
        a, b = r, int(r * 0.38)
        pts = [
            (cx - b, cy - a), (cx + b, cy - a), (cx + b, cy - b), (cx + a, cy - b),
            (cx + a, cy + b), (cx + b, cy + b), (cx + b, cy + a), (cx - b, cy + a),
            (cx - b, cy + b), (cx - a, cy + b), (cx - a, cy - b), (cx - b, cy - b),
        ]  # fmt: skip  # a table of vertices: clearer in rows
    return np.round(np.asarray(pts)).astype(np.int32)


def _needle_layer(
    needle: Needle, width: int, height: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Render one needle once: a premultiplied RGB layer and its float alpha (H, W, 1)."""
    layer = np.zeros((height, width, 3), np.uint8)
    mask = np.zeros((height, width), np.uint8)
    r = int(0.36 * min(width, height))
    cx = int(rng.integers(r + 2, width - r - 1))
    cy = int(rng.integers(r + 2, height - r - 1))
    rgb = COLORS[needle.color]
    for target, value in ((layer, rgb), (mask, 255)):
        if needle.shape == "circle":
            cv2.circle(target, (cx, cy), r, value, thickness=-1, lineType=cv2.LINE_AA)
        else:
            cv2.fillPoly(target, [_shape_points(needle.shape, cx, cy, r)], value, cv2.LINE_AA)
    if not needle.word:
        return layer.astype(np.float32), (mask.astype(np.float32) / 255.0)[..., None]
    ink = (0, 0, 0) if sum(rgb) > 400 or rgb[1] > 150 else (255, 255, 255)
    font, thickness = cv2.FONT_HERSHEY_SIMPLEX, 2
    (tw, _), _ = cv2.getTextSize(needle.word, font, 1.0, thickness)
    scale = min(1.2, 1.1 * r / tw)
    (tw, th), _ = cv2.getTextSize(needle.word, font, scale, thickness)
    org = (cx - tw // 2, cy + th // 2 + int(0.15 * r))
    cv2.putText(layer, needle.word, org, font, scale, ink, thickness, cv2.LINE_AA)
    cv2.putText(mask, needle.word, org, font, scale, 255, thickness, cv2.LINE_AA)
    return layer.astype(np.float32), (mask.astype(np.float32) / 255.0)[..., None]


def _background(rng: np.random.Generator, width: int, height: int, noise: float) -> np.ndarray:
    """A smooth, muted texture larger than the frame, to drift across; `noise` scales its
    contrast (0 = flat grey, 1 = full texture)."""
    shape = (height // 16 + 4, width // 16 + 4)
    gray = rng.uniform(45, 125, size=(*shape, 1))
    tint = rng.uniform(-20, 20, size=(*shape, 3))  # low saturation keeps needle colours salient
    coarse = (gray + tint if noise == 1 else 85 + noise * (gray + tint - 85)).astype(np.float32)
    big = cv2.resize(coarse, (2 * width, 2 * height), interpolation=cv2.INTER_CUBIC)
    grain = noise * rng.normal(0, 2, size=(*big.shape[:2], 1)).astype(np.float32)
    return np.clip(big + grain, 25, 150).astype(np.int16)  # headroom for the +-20 wave


def make_video(
    path: str | os.PathLike,
    *,
    seed: int,
    duration: float = 60.0,
    fps: float = 8.0,
    width: int = 320,
    height: int = 240,
    n_needles: int = 1,
    needle_seconds: float = 2.0,
    needles: Sequence[Needle] | None = None,
    noise: float = 1.0,
) -> SyntheticVideo:
    """Write an H.264 mp4 with a drifting background and needle events; same seed, same frames.

    `needles` places the needles exactly (then `n_needles` and `needle_seconds` are unused);
    `noise` in [0, 1] scales the background's texture and drift (a training curriculum).
    """
    if width % 2 or height % 2 or width < 64 or height < 64:
        raise ValueError(f"width and height must be even and >= 64, got {width}x{height}")
    if duration <= 0 or fps <= 0:
        raise ValueError(f"duration and fps must be positive, got {duration} s at {fps} fps")
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise must be in [0, 1], got {noise}")
    rng = np.random.default_rng(seed)
    if needles is None:
        needles = _plan_needles(rng, duration, fps, n_needles, needle_seconds)
    needles = tuple(needles)
    layers = [_needle_layer(n, width, height, rng) for n in needles]
    spans = [(round(n.start * fps), round(n.end * fps)) for n in needles]  # frame indices
    texture = _background(rng, width, height, noise)
    wave = 20 * noise * np.sin(2 * np.pi * np.arange(width) / width)  # periodic: no seam
    wave = wave.astype(np.int16)[None, :, None]

    out = Path(path).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    rate = Fraction(fps).limit_denominator(1001)
    n_frames = round(duration * fps)
    with av.open(str(out), mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=rate)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.gop_size = max(1, round(fps * 4))
        stream.options = dict(X264_OPTIONS)
        for i in range(n_frames):
            t = i / fps
            ox = int((0.5 + 0.45 * np.sin(2 * np.pi * t / 23.0)) * width)
            oy = int((0.5 + 0.45 * np.sin(2 * np.pi * t / 31.0 + 1.0)) * height)
            shift = np.roll(wave, int(t * 12) % width, axis=1)
            img = (texture[oy : oy + height, ox : ox + width] + shift).astype(np.uint8)
            for (first, stop), (layer, alpha) in zip(spans, layers, strict=True):
                if first <= i < stop:
                    img = (img * (1.0 - alpha) + layer).astype(np.uint8)
            yuv = cv2.cvtColor(img, cv2.COLOR_RGB2YUV_I420)
            frame = av.VideoFrame.from_ndarray(yuv, format="yuv420p")
            frame.pts, frame.time_base = i, 1 / rate
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return SyntheticVideo(
        path=str(out),
        seed=seed,
        duration=n_frames / fps,
        fps=fps,
        width=width,
        height=height,
        needles=needles,
    )


def _window_text(start: float, end: float) -> str:
    return f"{start:g}-{end:g}"


def make_questions(video: SyntheticVideo, *, seed: int) -> list[QAItem]:
    """Three questions per needle: colour (multiple choice), when (grounding), word (open-ended)."""
    rng = np.random.default_rng(seed)
    stem = Path(video.path).stem
    used = {n.color for n in video.needles}
    items: list[QAItem] = []
    for i, n in enumerate(video.needles):
        pool = sorted(set(COLORS) - used)
        distractors = [str(c) for c in rng.choice(pool, size=min(3, len(pool)), replace=False)]
        choices = [n.color, *distractors]
        order = rng.permutation(len(choices))
        choices = [choices[j] for j in order]
        letter = "ABCD"[choices.index(n.color)]
        items += [
            QAItem(
                id=f"{stem}-n{i}-mc",
                kind="multiple_choice",
                question=f'What colour was the {n.shape} with the word "{n.word}" written on it?',
                options=tuple(f"{'ABCD'[k]}. {c}" for k, c in enumerate(choices)),
                answer=letter,
                target={"letter": letter},
            ),
            QAItem(
                id=f"{stem}-n{i}-ground",
                kind="grounding",
                question=(
                    f"When does the {n.color} {n.shape} appear? Give start and end in seconds."
                ),
                options=(),
                answer=_window_text(n.start, n.end),
                target={"start": n.start, "end": n.end},
            ),
            QAItem(
                id=f"{stem}-n{i}-open",
                kind="open_ended",
                question=f"What word was written on the {n.color} {n.shape}?",
                options=(),
                answer=n.word,
                target={"text": n.word},
            ),
        ]
    return items


def write_manifest(video: SyntheticVideo, items: list[QAItem], path: str | os.PathLike) -> None:
    """Write the ground-truth JSON sidecar atomically; the video path is stored relative to it."""
    out = Path(path).resolve()
    payload = asdict(video)
    payload["path"] = os.path.relpath(video.path, out.parent)
    doc = {"version": MANIFEST_VERSION, "video": payload, "items": [asdict(i) for i in items]}
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out)


def read_manifest(path: str | os.PathLike) -> tuple[SyntheticVideo, list[QAItem]]:
    """Read a sidecar written by write_manifest; the video path comes back absolute."""
    src = Path(path).resolve()
    doc = json.loads(src.read_text(encoding="utf-8"))
    if doc.get("version") != MANIFEST_VERSION:
        raise ValueError(
            f"{src}: manifest version {doc.get('version')!r} is not {MANIFEST_VERSION}; "
            "regenerate it with agents.synthetic.write_manifest"
        )
    v = dict(doc["video"])
    needles = tuple(Needle(**n) for n in v.pop("needles"))
    v["path"] = str((src.parent / v["path"]).resolve())
    video = SyntheticVideo(**v, needles=needles)
    items = [QAItem(**{**i, "options": tuple(i["options"])}) for i in doc["items"]]
    return video, items
