"""The bundled demo video is what its manifest says, and its overview frames miss the needle."""

from __future__ import annotations

from pathlib import Path

from agents import video
from agents.synthetic import make_video, read_manifest

DEMO = Path(__file__).resolve().parents[1] / "assets" / "demo"


def test_demo_video_matches_its_manifest_and_regenerates(tmp_path):
    demo, items = read_manifest(DEMO / "needle.json")
    info = video.probe(DEMO / "needle.mp4")
    assert abs(info.duration - demo.duration) < 0.5
    again = make_video(
        tmp_path / "again.mp4",
        seed=demo.seed,
        duration=demo.duration,
        fps=demo.fps,
        width=demo.width,
        height=demo.height,
        n_needles=len(demo.needles),
        needle_seconds=demo.needles[0].end - demo.needles[0].start,
    )
    assert again.needles == demo.needles
    assert {i.kind for i in items} == {"multiple_choice", "grounding", "open_ended"}


def test_the_demo_overview_cannot_see_the_needle():
    demo, _ = read_manifest(DEMO / "needle.json")
    (needle,) = demo.needles
    overview = video.overview_timestamps(demo.duration, 8)
    assert not any(needle.start <= t < needle.end for t in overview)
    window = video.window_timestamps(needle.start - 5, needle.end + 5, fps=1.0, max_frames=16)
    assert any(needle.start <= t < needle.end for t in window)
