"""Keyframe-snapped overview sampling on a real H.264 file: real times, the same pixels."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents import prompts
from agents.media import video
from agents.question import Question
from app import build_parser
from graphs.builder import compile_graph
from graphs.context import Context, context_from_args
from graphs.runs.run import run_question
from tests.support.fakes import ScriptedModel

GOP_S = 5.0  # a keyframe every 5 s: 50 frames at 10 fps, with B-frames between


@pytest.fixture(scope="module")
def gop_video(tmp_path_factory) -> Path:
    """120 s of 320x240 H.264 at 10 fps, a keyframe every 5 s; a bar moves with time."""
    path = tmp_path_factory.mktemp("keyframes") / "gop5.mp4"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=10)
        stream.width, stream.height, stream.pix_fmt = 320, 240, "yuv420p"
        stream.codec_context.gop_size = 50
        stream.options = {"bf": "2", "sc_threshold": "0", "preset": "veryfast"}
        for i in range(1200):
            pixels = np.full((240, 320, 3), 40, np.uint8)
            pixels[100:140, (i * 3) % 280 : (i * 3) % 280 + 40] = 250
            out.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
        out.mux(stream.encode())
    return path


def test_keyframe_times_come_from_the_packets(gop_video):
    assert video.keyframe_times(gop_video) == tuple(GOP_S * k for k in range(24))
    assert video.snap_to_keyframes(gop_video, [7.3, 7.5, 2.4, 119.0]) == [5.0, 5.0, 0.0, 115.0]


def test_each_frame_is_its_nearest_keyframe_with_the_pixels_of_an_exact_decode(gop_video):
    targets = [7.3, 33.0, 60.1, 2.2, 2.3, 119.0]
    frames = video.decode_frames(gop_video, targets, max_pixels=20_000, sampling="keyframe")
    assert [f.requested for f in frames] == targets
    assert [f.timestamp for f in frames] == [5.0, 35.0, 60.0, 0.0, 0.0, 115.0]
    exact = video.decode_frames(gop_video, [5.0, 35.0, 115.0], max_pixels=20_000)
    assert [f.jpeg for f in exact] == [frames[0].jpeg, frames[1].jpeg, frames[5].jpeg]
    assert frames[0].jpeg != frames[1].jpeg, "different keyframes are different pictures"


def test_the_overview_reference_and_labels_carry_the_real_times(gop_video):
    times = video.overview_timestamps(120.0, 8)  # 7.5, 22.5, ... 112.5
    ref = prompts.frames_part(str(gop_video), times, 20_000, sampling="keyframe")
    assert ref["sampling"] == "keyframe" and ref["requested"] == times
    assert ref["timestamps"] == [5.0, 20.0, 35.0, 50.0, 65.0, 80.0, 95.0, 110.0]
    assert ref["errors"] == [-2.5] * 8
    parts = prompts.expand_frames([{"role": "user", "content": [ref]}])[0]["content"]
    labels = [p["text"] for p in parts if p["type"] == "text"]
    assert labels == [f"<{t:.1f} seconds>" for t in ref["timestamps"]]
    assert prompts.frames_part(str(gop_video), times, 20_000)["timestamps"] == times


async def test_a_run_traces_the_real_times_and_their_errors(gop_video, board):
    model = ScriptedModel()
    context = Context(overview_frames=8, overview_max_pixels=20_000, overview_sampling="keyframe")
    graph = compile_graph(model, board, checkpointer=InMemorySaver())
    result = await run_question(
        graph,
        board,
        video_path=str(gop_video),
        question=Question("Where is the bar?"),
        context=context,
    )
    overview = result.trace["overview"]
    assert overview["timestamps"] == [5.0, 20.0, 35.0, 50.0, 65.0, 80.0, 95.0, 110.0]
    assert overview["requested"] == video.overview_timestamps(120.0, 8)
    assert max(abs(e) for e in overview["errors"]) <= GOP_S / 2
    assert "<35.0 seconds>" in model.main_requests[0].text()
    assert "<37.5 seconds>" not in model.main_requests[0].text()


def test_the_option_is_a_flag_and_exact_stays_the_default():
    run = ["run", "--video=v", "--question=q"]
    assert context_from_args(build_parser().parse_args(run)).overview_sampling == "exact"
    args = build_parser().parse_args([*run, "--overview-sampling", "keyframe"])
    assert context_from_args(args).overview_sampling == "keyframe"


def test_still_media_ignore_keyframe_sampling(tmp_path):
    import cv2

    image = tmp_path / "chart.png"
    cv2.imwrite(str(image), np.zeros((60, 80, 3), np.uint8))
    ref = prompts.frames_part(str(image), [0.5], 4096, sampling="keyframe")
    assert "sampling" not in ref and ref["timestamps"] == [0.5]
