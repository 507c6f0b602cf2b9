"""Frame references for the release's protocols: frames picked and sized by qwen-vl-utils'
rules (`agents.media.qwen_frames`) over the video's frame table, encoded as the release encodes them
(bicubic resize, PIL JPEG at quality 85), with or without time labels; and the ``video_url``
part for servers that decode the video themselves."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from agents.media import qwen_frames
from agents.media.video_probe import FrameTable, VideoInfo
from agents.prompts import FRAMES_PART, VIDEO_PART

CROP = {"sample_fps": 1, "min_frames": 1, "max_frames": 16, "min_pixels": 784, "max_pixels": 50176}
"""Every crop of the release (its eval driver's ``crop_frames`` and its RL sub-agent)."""


def crop_plan(
    table: FrameTable, info: VideoInfo, start: float, end: float
) -> qwen_frames.FramePlan:
    """The frames of one crop window; FrameRuleError where qwen-vl-utils fails the crop."""
    return qwen_frames.fetch_plan(
        total_frames=table.count,
        fps=table.fps,
        width=info.width,
        height=info.height,
        start=start,
        end=end,
        **CROP,
    )


def qwen_part(
    video: str,
    table: FrameTable,
    plan: qwen_frames.FramePlan | None,
    label_times: Sequence[float] | None = None,
    encoding: str = "qwen",
) -> dict[str, Any]:
    """A frame reference for `plan`'s frames (none for None): real times from the frame table,
    the plan's size, qwen encoding; each image after ``<t seconds>`` only when `label_times`
    gives the times to print."""
    indices = list(plan.indices) if plan else []
    width, height = plan.size if plan else (0, 0)
    ref: dict[str, Any] = {
        "type": FRAMES_PART,
        "video": str(video),
        "timestamps": [round(table.times[i], 6) for i in indices],
        "max_pixels": width * height,
        "indices": indices,
        "size": [width, height],
        "encoding": encoding,
        "labels": [round(float(t), 6) for t in label_times] if label_times is not None else None,
    }
    return ref


def video_url_part(path: str) -> dict[str, Any]:
    """A reference to the whole video, for the server to decode (``--video_channel
    video_url``): sent as a ``file://`` video_url (`agents.prompts.expand_frames`); no frames."""
    return {"type": VIDEO_PART, "video": os.path.abspath(path), "timestamps": [], "max_pixels": 0}


def video_of(part: dict[str, Any]) -> str:
    """The video a content part shows (a frame or video reference)."""
    return part["video"]
