"""Tests for agents.media.video: probing, sampling rules, decoding by timestamp and error
messages."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
from fractions import Fraction
from pathlib import Path

import av
import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.media.frame_store import data_url, encode_frames
from agents.media.video import (
    Frame,
    VideoError,
    adecode_frames,
    decode_frames,
    fit_pixels,
    overview_timestamps,
    probe,
    timestamp_text,
    window_timestamps,
)
from agents.synthetic import COLORS, make_video

VFR_PTS_MS = (0, 100, 150, 400, 1000, 1100, 1900, 2000, 3500, 3600, 3650, 5000)


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    return make_video(tmp_path_factory.mktemp("video") / "needles.mp4", seed=7, n_needles=3)


@pytest.fixture(scope="module")
def vfr_path(tmp_path_factory):
    """Irregular pts in ms; frame i is a flat grey of level 10 + 20 * i."""
    path = tmp_path_factory.mktemp("vfr") / "vfr.mp4"
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=10, options={"bf": "0"})
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1000)
        for i, pts in enumerate(VFR_PTS_MS):
            frame = av.VideoFrame.from_ndarray(np.full((64, 64, 3), 10 + 20 * i, np.uint8), "rgb24")
            frame.pts, frame.time_base = pts, Fraction(1, 1000)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    return path


def rgb(frame: Frame) -> np.ndarray:
    bgr = cv2.imdecode(np.frombuffer(frame.jpeg, np.uint8), cv2.IMREAD_COLOR)
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


def color_fraction(img: np.ndarray, color: str, tol: float = 70.0) -> float:
    diff = img.astype(np.float32) - np.asarray(COLORS[color], np.float32)
    return float((np.linalg.norm(diff, axis=-1) < tol).mean())


def test_probe_reads_headers_and_caches(video):
    info = probe(video.path)
    assert (info.duration, info.fps, info.width, info.height, info.codec) == (
        60.0,
        8.0,
        320,
        240,
        "h264",
    )
    assert info.path == video.path
    assert probe(video.path) is info


@pytest.mark.parametrize(
    ("duration", "n", "expected"),
    [
        (10.0, 1, [5.0]),
        (10.0, 4, [1.25, 3.75, 6.25, 8.75]),
        (60.0, 3, [10.0, 30.0, 50.0]),
    ],
)
def test_overview_timestamps(duration, n, expected):
    assert overview_timestamps(duration, n) == pytest.approx(expected)


@pytest.mark.parametrize(("duration", "n"), [(0.0, 4), (10.0, 0)])
def test_overview_timestamps_rejects_bad_input(duration, n):
    with pytest.raises(ValueError, match="need n >= 1 and duration > 0"):
        overview_timestamps(duration, n)


@pytest.mark.parametrize(
    ("start", "end", "kw", "expected"),
    [
        (10.0, 13.0, {}, [10.0, 11.0, 12.0]),
        (0.0, 3.0, {"fps": 2.0}, [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]),
        (0.0, 16.0, {}, [float(k) for k in range(16)]),
        (0.0, 100.0, {"max_frames": 4}, [12.5, 37.5, 62.5, 87.5]),
        (0.0, 17.0, {"max_frames": 16}, [(k + 0.5) * 17 / 16 for k in range(16)]),
        (20.0, 30.0, {"max_frames": 1}, [25.0]),
        (5.0, 5.3, {}, [5.0]),
        (5.0, 5.0, {}, [5.0]),
        (1.0, 2.000000001, {}, [1.0]),
    ],
)
def test_window_timestamps(start, end, kw, expected):
    assert window_timestamps(start, end, **kw) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("start", "end", "kw", "match"),
    [
        (5.0, 4.0, {}, "start <= end"),
        (0.0, 4.0, {"fps": 0.0}, "fps > 0"),
        (0.0, 4.0, {"max_frames": 0}, "max_frames >= 1"),
    ],
)
def test_window_timestamps_rejects_bad_input(start, end, kw, match):
    with pytest.raises(ValueError, match=match):
        window_timestamps(start, end, **kw)


@pytest.mark.parametrize(
    ("size", "budget", "expected"),
    [
        ((1280, 720), 50_176, (298, 168)),
        ((224, 224), 50_176, (224, 224)),
        ((200, 100), 50_176, (200, 100)),
        ((201, 101), 50_176, (200, 100)),
        ((320, 240), 50_176, (258, 192)),
    ],
)
def test_fit_pixels_table(size, budget, expected):
    assert fit_pixels(*size, budget) == expected


@given(
    st.integers(2, 8000),
    st.integers(2, 8000),
    st.integers(4, 4_000_000),
)
def test_fit_pixels_respects_budget_and_never_upscales(width, height, budget):
    w, h = fit_pixels(width, height, budget)
    assert w % 2 == 0 and h % 2 == 0
    assert w <= max(width, 2) and h <= max(height, 2)
    if min(w, h) > 2:  # clamped minimum sizes aside
        assert w * h <= budget


def test_decoded_frames_are_near_requested_times_and_fit_budget(video):
    times = overview_timestamps(video.duration, 16)
    frames = decode_frames(video.path, times, max_pixels=50_176)
    assert [f.requested for f in frames] == times
    for f in frames:
        assert abs(f.timestamp - f.requested) <= 0.5 / video.fps + 1e-6
        assert f.width * f.height <= 50_176
        assert rgb(f).shape == (f.height, f.width, 3)


def test_needle_colour_is_visible_only_during_the_needle(video):
    for needle in video.needles:
        inside = (needle.start + needle.end) / 2
        before = max(0.0, needle.start - 4.0)
        frame_in, frame_out = decode_frames(video.path, [inside, before])
        assert color_fraction(rgb(frame_in), needle.color) > 0.05, needle
        assert color_fraction(rgb(frame_out), needle.color) < 0.005, needle


def test_background_never_looks_like_a_needle_colour(video):
    needle_free = [
        t for t in range(0, 60, 3) if not any(n.start - 1 < t < n.end + 1 for n in video.needles)
    ]
    for frame in decode_frames(video.path, needle_free):
        img = rgb(frame)
        for color in COLORS:
            assert color_fraction(img, color) < 0.005, (frame.timestamp, color)


def test_order_of_unsorted_and_repeated_requests_is_preserved(video):
    times = [50.0, 2.0, 30.5, 2.0, 59.9, 0.0]
    frames = decode_frames(video.path, times)
    assert [f.requested for f in frames] == times
    assert [f.timestamp for f in frames] == pytest.approx([50.0, 2.0, 30.5, 2.0, 59.875, 0.0])
    assert frames[1].jpeg == frames[3].jpeg


def test_times_in_the_last_frame_interval_clamp_to_the_last_frame(video):
    (frame,) = decode_frames(video.path, [video.duration])
    assert frame.timestamp == pytest.approx(video.duration - 1 / video.fps)


def test_empty_request_returns_no_frames(video):
    assert decode_frames(video.path, []) == []


def test_encode_frames_is_cached(video):
    first = encode_frames(video.path, (1.0, 2.0), 20_000)
    assert encode_frames(video.path, (1.0, 2.0), 20_000) is first
    assert encode_frames(video.path, (1.0, 2.0), 10_000) is not first
    assert all(f.width * f.height <= 20_000 for f in first)


def test_adecode_frames_runs_off_the_event_loop(video):
    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0)
                ticks += 1

        task = asyncio.create_task(ticker())
        frames = await adecode_frames(video.path, overview_timestamps(video.duration, 32))
        task.cancel()
        return frames, ticks

    frames, ticks = asyncio.run(main())
    assert len(frames) == 32
    assert ticks > 0


def test_variable_frame_rate_is_sampled_by_timestamp(vfr_path):
    requested = [0.3, 0.9, 1.45, 3.0, 3.62, 4.9, 1.0]
    expected_ms = [400, 1000, 1100, 3500, 3600, 5000, 1000]
    frames = decode_frames(vfr_path, requested)
    assert [round(f.timestamp * 1000) for f in frames] == expected_ms
    for f, ms in zip(frames, expected_ms, strict=True):
        level = 10 + 20 * VFR_PTS_MS.index(ms)
        assert abs(rgb(f).mean() - level) < 4, (f, level)


def test_timestamp_text_and_data_url():
    assert timestamp_text(12.46) == "<12.5 seconds>"
    assert timestamp_text(0) == "<0.0 seconds>"
    frame = Frame(1.0, 1.0, 2, 2, b"\xff\xd8jpeg")
    url = data_url(frame)
    assert url.startswith("data:image/jpeg;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == frame.jpeg


def test_missing_file(tmp_path):
    with pytest.raises(VideoError, match=r"video not found: .*nope\.mp4"):
        probe(tmp_path / "nope.mp4")


def test_empty_file(tmp_path):
    (tmp_path / "empty.mp4").touch()
    with pytest.raises(VideoError, match=r"empty \(0 bytes\).*fully downloaded"):
        probe(tmp_path / "empty.mp4")


def test_a_folder_without_page_images(tmp_path):
    (tmp_path / "notes.txt").write_text("not a page")
    with pytest.raises(VideoError, match="is a folder with no page images"):
        decode_frames(tmp_path, [0.0])


def test_text_file_named_mp4(tmp_path):
    path = tmp_path / "notes.mp4"
    path.write_text("these are not video frames\n" * 20)
    with pytest.raises(VideoError, match=r"cannot read .*notes\.mp4 as a video.*ffmpeg -i"):
        probe(path)


def test_audio_only_file(tmp_path):
    path = tmp_path / "speech.m4a"
    with av.open(str(path), "w", format="mp4") as container:
        stream = container.add_stream("aac", rate=16_000, layout="mono")
        for i in range(16):
            frame = av.AudioFrame.from_ndarray(
                np.zeros((1, 1024), np.float32), format="fltp", layout="mono"
            )
            frame.sample_rate, frame.pts = 16_000, i * 1024
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    with pytest.raises(VideoError, match=r"speech\.m4a has no video stream"):
        probe(path)


def test_truncated_file(video, tmp_path):
    data = Path(video.path).read_bytes()
    path = tmp_path / "truncated.mp4"
    path.write_bytes(data[: int(len(data) * 0.3)])
    with pytest.raises(VideoError, match=r"truncated\.mp4.*fully downloaded"):
        decode_frames(path, [1.0])


@pytest.fixture(scope="module")
def faststart_path(tmp_path_factory):
    """20 s of noise with the index at the front, so a cut file still opens."""
    path = tmp_path_factory.mktemp("faststart") / "faststart.mp4"
    with av.open(str(path), "w", options={"movflags": "faststart"}) as container:
        stream = container.add_stream("libx264", rate=8)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        rng = np.random.default_rng(0)
        for _ in range(160):
            img = rng.integers(0, 255, (64, 64, 3), np.uint8)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(img, "rgb24")))
        container.mux(stream.encode())
    return path


@pytest.mark.parametrize("at_packet_boundary", [False, True])
def test_truncated_faststart_file_fails_when_decoding_past_the_cut(
    faststart_path, tmp_path, at_packet_boundary
):
    data = faststart_path.read_bytes()
    cut_at = int(len(data) * 0.4)
    if at_packet_boundary:  # the decoder then stops cleanly, early
        with av.open(str(faststart_path)) as container:
            cut_at = min(p.pos for p in container.demux(video=0) if p.pos and p.pos >= cut_at)
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[:cut_at])
    assert probe(cut).duration == pytest.approx(20.0)
    assert len(decode_frames(cut, [1.0])) == 1
    with pytest.raises(VideoError, match=r"cut\.mp4 .*truncated.*fully downloaded"):
        decode_frames(cut, [18.0])


@pytest.mark.parametrize("times", [[-0.5], [10.0, 61.0], [float("nan")]])
def test_times_outside_the_video(video, times):
    with pytest.raises(VideoError, match=r"outside the video, which lasts 0-60\.000 s"):
        decode_frames(video.path, times)


def test_unknown_backend(video):
    with pytest.raises(ValueError, match="unknown video backend 'ffmpeg'"):
        decode_frames(video.path, [1.0], backend="ffmpeg")


@pytest.mark.skipif(importlib.util.find_spec("decord") is not None, reason="decord is installed")
def test_decord_backend_names_the_extra(video):
    with pytest.raises(ImportError, match=r"pip install paravt-graph\[decord\]"):
        decode_frames(video.path, [1.0], backend="decord")


def test_frame_threads_only_from_320x240_and_they_change_no_pixel(video, tmp_path, monkeypatch):
    """Tiny frames decode on one thread (threads would only add CPU); 320x240 and up use
    frame threads. Either way the decoded frames are the same."""
    import agents.media.video as vid

    tiny = make_video(tmp_path / "tiny.mp4", seed=3, duration=8.0, width=128, height=96)
    assert vid.decoder_threads(probe(tiny.path)) == ("SLICE", 1)
    assert vid.decoder_threads(probe(video.path)) == (vid.THREAD_TYPE, vid.DECODE_THREADS)
    times = [0.5, 30.0, 59.5]
    threaded = [f.jpeg for f in decode_frames(video.path, times)]
    monkeypatch.setattr(vid, "THREADED_MIN_PIXELS", 1 << 62)
    assert vid.decoder_threads(probe(video.path)) == ("SLICE", 1)
    assert [f.jpeg for f in decode_frames(video.path, times)] == threaded
