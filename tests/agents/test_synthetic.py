"""Tests for agents.synthetic: deterministic needle videos, questions and manifests."""

from __future__ import annotations

import hashlib
import itertools

import av
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.media.video import probe
from agents.synthetic import (
    COLORS,
    SHAPES,
    QAItem,
    SyntheticVideo,
    _plan_needles,
    make_questions,
    make_video,
    read_manifest,
    write_manifest,
)

SHORT = {"duration": 12.0, "fps": 4.0, "n_needles": 2}


def pixel_digest(path: str) -> str:
    digest = hashlib.sha256()
    with av.open(path) as container:
        for frame in container.decode(video=0):
            digest.update(frame.to_ndarray(format="rgb24").tobytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    root = tmp_path_factory.mktemp("synthetic")
    return (
        make_video(root / "a.mp4", seed=3, **SHORT),
        make_video(root / "b.mp4", seed=3, **SHORT),
        make_video(root / "c.mp4", seed=4, **SHORT),
    )


def test_same_seed_gives_same_needles_and_pixels(videos):
    a, b, _ = videos
    assert a.needles == b.needles
    assert pixel_digest(a.path) == pixel_digest(b.path)


def test_different_seed_gives_a_different_video(videos):
    a, _, c = videos
    assert a.needles != c.needles
    assert pixel_digest(a.path) != pixel_digest(c.path)


def test_video_matches_its_description(videos):
    a = videos[0]
    info = probe(a.path)
    assert (info.duration, info.fps, info.width, info.height) == (12.0, 4.0, 320, 240)
    assert (a.duration, a.fps, a.width, a.height, a.seed) == (12.0, 4.0, 320, 240, 3)


def test_needle_shows_in_exactly_its_frames(tmp_path):
    video = make_video(tmp_path / "thirds.mp4", seed=1, duration=12.0, fps=3.0, needle_seconds=1.0)
    (needle,) = video.needles
    colour = np.asarray(COLORS[needle.color], np.float32)
    shown = []
    with av.open(video.path) as container:
        for frame in container.decode(video=0):
            img = frame.to_ndarray(format="rgb24").astype(np.float32)
            if (np.linalg.norm(img - colour, axis=-1) < 70).mean() > 0.05:
                shown.append(round(frame.time * video.fps))
    first = round(needle.start * video.fps)
    assert shown == list(range(first, first + 3))


def test_default_video_is_small(tmp_path):
    video = make_video(tmp_path / "default.mp4", seed=0)
    assert video.duration == 60.0 and len(video.needles) == 1
    assert (tmp_path / "default.mp4").stat().st_size < 1_000_000


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 8),
    seconds=st.sampled_from([0.5, 1.0, 2.0, 3.0]),
    fps=st.sampled_from([1.0, 4.0, 8.0, 29.97]),
)
def test_needles_are_disjoint_distinct_and_inside(seed, n, seconds, fps):
    duration = 8.0 * n
    needles = _plan_needles(np.random.default_rng(seed), duration, fps, n, seconds)
    assert len(needles) == n
    for needle in needles:
        assert 0.0 < needle.start < needle.end <= duration
        assert needle.end - needle.start >= seconds - 1e-9
        assert needle.color in COLORS and needle.shape in SHAPES
    for earlier, later in itertools.pairwise(needles):
        assert earlier.end < later.start
    assert len({n.color for n in needles}) == n
    assert len({n.word for n in needles}) == n


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"n_needles": 9}, "one distinct colour per needle"),
        ({"n_needles": -1}, "use 0 to 8"),
        ({"duration": 4.0, "n_needles": 3, "needle_seconds": 2.0}, "do not fit"),
        ({"width": 321}, "even"),
    ],
)
def test_make_video_rejects_impossible_requests(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        make_video(tmp_path / "x.mp4", seed=0, **kw)


def test_questions_cover_each_kind_with_correct_answers(videos):
    video = videos[0]
    items = make_questions(video, seed=11)
    assert len(items) == 3 * len(video.needles)
    by_kind: dict[str, list[QAItem]] = {}
    for item in items:
        by_kind.setdefault(item.kind, []).append(item)
    assert set(by_kind) == {"multiple_choice", "grounding", "open_ended"}
    for needle, mc, ground, open_ in zip(
        video.needles,
        by_kind["multiple_choice"],
        by_kind["grounding"],
        by_kind["open_ended"],
        strict=True,
    ):
        assert len(mc.options) == 4 and mc.target == {"letter": mc.answer}
        assert f"{mc.answer}. {needle.color}" in mc.options
        assert needle.word in mc.question
        assert ground.target == {"start": needle.start, "end": needle.end}
        assert ground.answer == f"{needle.start:g}-{needle.end:g}"
        assert f"{needle.color} {needle.shape}" in ground.question and not ground.options
        assert open_.answer == needle.word and open_.target == {"text": needle.word}
    assert len({item.id for item in items}) == len(items)


def test_questions_are_deterministic_by_seed(videos):
    video = videos[0]
    assert make_questions(video, seed=1) == make_questions(video, seed=1)
    options = {tuple(make_questions(video, seed=s)[0].options) for s in range(8)}
    assert len(options) > 1


def test_manifest_round_trip(videos, tmp_path):
    video = videos[0]
    items = make_questions(video, seed=5)
    path = tmp_path / "a.json"
    write_manifest(video, items, path)
    loaded_video, loaded_items = read_manifest(path)
    assert isinstance(loaded_video, SyntheticVideo)
    assert loaded_video == video
    assert loaded_items == items


def test_manifest_version_mismatch_is_explained(videos, tmp_path):
    path = tmp_path / "old.json"
    write_manifest(videos[0], [], path)
    path.write_text(path.read_text().replace('"version": 1', '"version": 0'))
    with pytest.raises(ValueError, match="regenerate it"):
        read_manifest(path)
