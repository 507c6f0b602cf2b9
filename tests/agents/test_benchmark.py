"""The needle benchmark's rules hold on the generated splits (agents.benchmark)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import av
import numpy as np
import pytest

from agents import benchmark
from agents.media.sampling import overview_timestamps, window_timestamps
from agents.synthetic import COLORS, SyntheticVideo, read_manifest
from evals.tasks import get_task

TEST_SEEDS = range(benchmark.SPLIT_SEEDS["test"], benchmark.SPLIT_SEEDS["test"] + 300)


def near_colour(frame: np.ndarray, colour: str) -> float:
    """Share of the frame's pixels close to the needle colour."""
    target = np.array(COLORS[colour], dtype=float)
    return float((np.abs(frame.reshape(-1, 3) - target).sum(axis=1) < 90).mean())


@pytest.mark.parametrize("seed", [*TEST_SEEDS[:40], 0, 7, 999])
def test_each_plan_follows_the_rules(seed):
    duration, needles = benchmark.plan(seed)
    assert duration in {60.0 * m for m in range(1, 11)}
    assert 1 <= len(needles) <= benchmark.MAX_NEEDLES
    assert len({n.color for n in needles}) == len(needles) == len({n.shape for n in needles})
    for n in needles:
        assert n.color in benchmark.COLOURS and n.shape in benchmark.SHAPES and n.word == ""
        assert n.start > 0 and n.end < duration and float(n.start).is_integer()
        assert 0.03 * duration - 1 <= n.end - n.start <= benchmark.MAX_FRACTION * duration
    assert all(a.end < b.start for a, b in itertools.pairwise(needles))


def test_four_overview_frames_catch_a_needle_about_a_fifth_of_the_time_at_most():
    caught = total = 0
    for seed in TEST_SEEDS:
        duration, needles = benchmark.plan(seed)
        times = overview_timestamps(duration, 4)
        for n in needles:
            total += 1
            caught += any(n.start <= t < n.end for t in times)
        # the chance of one frame landing in a needle: its length over the frame spacing
        assert all((n.end - n.start) / (duration / 4) <= 0.2 for n in needles)
    assert 0.05 < caught / total <= 0.21  # measured over 300 videos: "about 20%" at most


def test_quarter_windows_of_twelve_frames_catch_every_needle():
    frames = benchmark.GRAPH_SETTINGS["crop_max_frames"]
    for seed in TEST_SEEDS:
        duration, needles = benchmark.plan(seed)
        quarters = [(q * duration / 4, (q + 1) * duration / 4) for q in range(4)]
        seen = {
            n
            for lo, hi in quarters
            for t in window_timestamps(lo, hi, fps=1.0, max_frames=frames)
            for n in benchmark.visible_at(needles, math.floor(t + 0.5))  # the frame decoded
        }
        assert seen == set(needles), seed


def test_the_test_split_is_generated_by_the_rules_and_shows_its_needles(tmp_path):
    loaded = get_task("needle").load(tmp_path, split="test", n_videos=3, max_minutes=1)
    assert len(loaded.samples) == 9
    kinds = [s.kind for s in loaded.samples]
    assert kinds == ["multiple_choice", "grounding", "open_ended"] * 3
    for source in loaded.sources:
        video, items = read_manifest(source)
        assert (video.duration, video.needles) == benchmark.plan(video.seed, minutes=(1, 1))
        assert video.seed >= benchmark.SPLIT_SEEDS["test"] and video.fps == benchmark.FPS
        with av.open(video.path) as container:
            frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
        assert len(frames) == video.duration
        for n in video.needles:
            inside = near_colour(frames[int(n.start)], n.color)
            assert inside > 0.1 > 5 * near_colour(frames[int(n.start) - 1], n.color)
        mc = items[0]
        assert mc.options[" ABCD".index(mc.answer) - 1].startswith(mc.answer + ". ")


def test_items_answer_what_the_video_shows():
    for seed in TEST_SEEDS[:60]:
        duration, needles = benchmark.plan(seed)
        video = SyntheticVideo(f"/x/needle_{seed}.mp4", seed, duration, 1.0, 128, 96, needles)
        mc, ground, open_ = benchmark.questions(video, seed=seed)
        chosen = dict(o.split(". ", 1) for o in mc.options)[mc.answer]
        kind = mc.id.rsplit("-", 1)[-1]
        expected = {
            "count": str(len(needles)),
            "order": needles[0].color,
        }.get(kind)
        if expected is not None:
            assert chosen == expected
        elif kind == "colour":
            assert any(n.color == chosen and n.shape in mc.question for n in needles)
        else:
            assert any(n.shape == chosen and n.color in mc.question for n in needles)
        assert any(
            (n.start, n.end) == (ground.target["start"], ground.target["end"]) for n in needles
        )
        assert open_.answer == f"{needles[-1].color} {needles[-1].shape}"


def test_the_same_seed_gives_the_same_files(tmp_path):
    a, items_a = benchmark.generate(tmp_path / "a", 5, minutes=(1, 1))
    b, items_b = benchmark.generate(tmp_path / "b", 5, minutes=(1, 1))
    assert a.needles == b.needles and items_a == items_b
    assert Path(a.path).read_bytes() == Path(b.path).read_bytes()
