"""Record qwen-vl-utils' own frame choices, as test data for `agents.media.qwen_frames`.

    python tests/parity/record_qwen_frames.py --out tests/data/parity/qwen_frames.json

Runs under a Python where ``qwen_vl_utils`` really imports: qwen-vl-utils 0.0.14 with torch,
torchvision, torchcodec and decord (tests/parity/README.md says how to make one). It writes
fixture videos of many sizes, durations and frame rates with PyAV, asks the library's
``fetch_video`` for overview frames (a count: the release's eval driver), crop windows (1 fps,
1-16 frames, 784-50,176 pixels: its crops and sub-agents) and rate-sampled overviews (its RL
workflow), and stores what came back: the decoder's frame count and average rate, the frame
indices, the frame size, or the error the library raised. It also sweeps the library's pure
functions (``smart_resize``, ``smart_nframes``, ``calculate_video_frame_range``) and torch's
``linspace`` rounding over many inputs. Nothing of the library is copied: only its outputs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

VIDEOS = [  # (width, height, seconds, frame rate as a fraction string)
    (320, 240, 20.0, "30"),
    (176, 144, 8.0, "24"),
    (640, 360, 45.0, "25"),
    (854, 480, 12.0, "30000/1001"),
    (1280, 720, 6.0, "60"),
    (360, 640, 15.0, "30"),
    (64, 64, 3.0, "10"),
    (320, 180, 95.0, "15"),
    (480, 270, 2.0, "24"),
    (1920, 1080, 4.0, "25"),
    (200, 150, 33.3, "12"),
    (320, 240, 1.5, "30"),
]
OVERVIEW_COUNTS = (4, 8, 16, 32, 64)
WINDOWS = [  # (start, end) as fractions of the duration, plus absolute oddities
    (0.0, 1.0),
    (0.1, 0.3),
    (0.5, 0.52),
    (0.9, 1.4),
    (0.3, 0.2),
    (1.2, 1.5),
    (0.0, 0.0),
    (0.25, 0.75),
]


def write_video(path: Path, width: int, height: int, seconds: float, rate: str) -> None:
    fps = Fraction(rate)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"preset": "ultrafast", "g": "12"}
        count = round(float(fps) * seconds)
        for i in range(count):
            y, x = np.mgrid[0:height, 0:width].astype(np.float32)
            rgb = np.stack([(x + 3 * i) % 256, (y + 5 * i) % 256, (x + y) / 2 % 256], axis=-1)
            frame = av.VideoFrame.from_ndarray(rgb.astype(np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def call(fetch_video, path: Path, ele: dict) -> dict:
    try:
        video, meta = fetch_video(
            {"type": "video", "video": f"file://{path}", **ele}, return_video_metadata=True
        )
    except Exception as exc:  # the library's refusal is the datum
        return {"error": type(exc).__name__, "message": str(exc)[:200]}
    indices = meta["frames_indices"]
    indices = indices.tolist() if hasattr(indices, "tolist") else list(indices)
    return {
        "indices": [int(i) for i in indices],
        "height": int(video.shape[2]),
        "width": int(video.shape[3]),
        "backend": meta.get("video_backend"),
        "total_frames": int(meta["total_num_frames"]),
        "fps": float(meta["fps"]),
    }


def video_requests(seconds: float) -> list[dict]:
    out = [{"nframes": n} for n in OVERVIEW_COUNTS]
    out += [
        {"fps": 1, "max_frames": 64, "min_pixels": 784, "max_pixels": 50176},
        {"nframes": 16, "min_pixels": 784, "max_pixels": 50176},
        {"fps": 2.0},
    ]
    for a, b in WINDOWS:
        out.append(
            {
                "fps": 1,
                "min_frames": 1,
                "max_frames": 16,
                "min_pixels": 784,
                "max_pixels": 50176,
                "video_start": round(a * seconds, 3),
                "video_end": round(b * seconds, 3),
            }
        )
    return out


def sweep_pure(vp) -> dict:
    rng = random.Random(0)
    resize, nframes, ranges, linspace = [], [], [], []
    for _ in range(3000):
        h, w = rng.randint(8, 4000), rng.randint(8, 4000)
        lo = rng.choice([784, 3136, 100352, rng.randint(100, 200000)])
        hi = rng.choice([50176, 151200, 602112, rng.randint(lo, 3_000_000)])
        try:
            out = list(vp.smart_resize(h, w, factor=28, min_pixels=lo, max_pixels=hi))
        except Exception as exc:
            out = type(exc).__name__
        resize.append([h, w, lo, hi, out])
    for _ in range(3000):
        total, fps = rng.randint(1, 20000), rng.choice([10, 23.976, 24, 25, 29.97, 30, 60, 7.5])
        ele = rng.choice(
            [
                {"nframes": rng.choice([1, 2, 3, 4, 16, 63, 64, 65])},
                {
                    "fps": rng.choice([0.5, 1, 2]),
                    "min_frames": rng.choice([1, 4]),
                    "max_frames": rng.choice([16, 64, 768]),
                },
                {"fps": 1},
            ]
        )
        try:
            out = vp.smart_nframes(ele, total_frames=total, video_fps=fps)
        except Exception as exc:
            out = type(exc).__name__
        nframes.append([total, fps, ele, out])
    for _ in range(2000):
        total, fps = rng.randint(1, 20000), rng.choice([10, 24, 25, 29.97, 30, 60])
        length = total / fps
        ele = {}
        if rng.random() < 0.9:
            ele["video_start"] = round(rng.uniform(-5, length + 5), 2)
        if rng.random() < 0.9:
            ele["video_end"] = round(rng.uniform(-5, length + 5), 2)
        try:
            out = list(vp.calculate_video_frame_range(ele, total, fps))
        except Exception as exc:
            out = type(exc).__name__
        ranges.append([total, fps, ele, out])
    import torch

    for _ in range(6000):
        first = rng.choice([0, rng.randint(0, 50000)])
        last = first + rng.randint(1, 300000)
        count = rng.choice([2, 4, 16, 32, 64, 128, 256, 768])
        if count > last - first + 1:
            continue
        values = torch.linspace(first, last, count).round().long().tolist()
        naive = np.rint(np.linspace(first, last, count)).astype(int).tolist()
        if values != naive or rng.random() < 0.05:  # keep the cases float64 gets wrong
            # stored as the positions where torch departs from float64 rounding (compact)
            departs = {k: v for k, (v, n) in enumerate(zip(values, naive, strict=True)) if v != n}
            linspace.append([first, last, count, departs])
    return {
        "smart_resize": resize,
        "smart_nframes": nframes,
        "frame_range": ranges,
        "linspace": linspace,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    import qwen_vl_utils
    import torch
    import torchvision
    from qwen_vl_utils import vision_process as vp

    backends = ["torchcodec", "decord"]
    videos = []
    with tempfile.TemporaryDirectory() as tmp:
        for width, height, seconds, rate in VIDEOS:
            path = Path(tmp) / f"v_{width}x{height}_{seconds}_{rate.replace('/', '-')}.mp4"
            write_video(path, width, height, seconds, rate)
            entry = {"width": width, "height": height, "seconds": seconds, "rate": rate}
            for backend in backends:
                os.environ["FORCE_QWENVL_VIDEO_READER"] = backend
                vp.FORCE_QWENVL_VIDEO_READER = backend
                vp.get_video_reader_backend.cache_clear()
                entry[backend] = [
                    {"request": ele, "result": call(vp.fetch_video, path, ele)}
                    for ele in video_requests(seconds)
                ]
            videos.append(entry)
    data = {
        "source": "qwen-vl-utils 0.0.14 fetch_video (vision_process.py)",
        "versions": {
            "qwen_vl_utils": getattr(qwen_vl_utils, "__version__", "0.0.14"),
            "torch": torch.__version__,
            "torchvision": torchvision.__version__,
            "python": sys.version.split()[0],
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        },
        "videos": videos,
        **sweep_pure(vp),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"wrote {args.out}: {len(videos)} videos")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
