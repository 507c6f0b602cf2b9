"""Frame threads by frame size: CPU and wall time of decode_frames with the decoder's frame
threads on and off, on 60 s H.264 clips from the needle task's 128x96 up to 720p.

`agents.media.video` threads the decoder only from `THREADED_MIN_PIXELS` up: below it threads save
no wall time and cost extra CPU, which a batch eval decoding many small videos at once pays
on every sample.

    python bench/decode_threads.py   # -> bench/decode_threads.json
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.media import video  # noqa: E402
from bench.video_decode import CACHE, ensure_ffmpeg  # noqa: E402

RESULT = Path(__file__).with_suffix(".json")
SIZES = ((128, 96), (320, 240), (640, 360), (960, 540), (1280, 720))
FRAME_COUNTS, RUNS = (4, 16), 3


def clip(ffmpeg: str, width: int, height: int) -> Path:
    """A 60 s 30 fps test pattern (GOP 250) at the given size, made once and cached."""
    path = CACHE / f"testsrc2_{width}x{height}_60s.mp4"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        source = f"testsrc2=size={width}x{height}:rate=30"
        cmd = [ffmpeg, "-y", "-loglevel", "error", "-f", "lavfi", "-i", source, "-t", "60"]
        cmd += ["-c:v", "libx264", "-g", "250", "-preset", "veryfast", "-pix_fmt", "yuv420p"]
        subprocess.run([*cmd, str(path)], check=True)
    return path


def timed(path: Path, times: list[float], threaded: bool) -> tuple[float, float]:
    """Median (CPU ms, wall ms) of RUNS decodes, frame threads forced on or off."""
    video.THREADED_MIN_PIXELS = 0 if threaded else 1 << 62
    cpu, wall = [], []
    for _ in range(RUNS):
        r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        video.decode_frames(path, times)
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        wall.append(time.perf_counter() - w0)
        cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return 1000 * sorted(cpu)[RUNS // 2], 1000 * sorted(wall)[RUNS // 2]


def main() -> None:
    ffmpeg, rule = ensure_ffmpeg(), video.THREADED_MIN_PIXELS
    rows = []
    for width, height in SIZES:
        path = clip(ffmpeg, width, height)
        duration = video.probe(path).duration
        for n in FRAME_COUNTS:
            times = video.overview_timestamps(duration, n)
            video.decode_frames(path, times)  # warm the file cache and the codec
            on_cpu, on_wall = timed(path, times, threaded=True)
            off_cpu, off_wall = timed(path, times, threaded=False)
            rows.append(
                {
                    "size": f"{width}x{height}",
                    "frames": n,
                    "threaded_cpu_ms": round(on_cpu, 1),
                    "threaded_wall_ms": round(on_wall, 1),
                    "single_cpu_ms": round(off_cpu, 1),
                    "single_wall_ms": round(off_wall, 1),
                    "threads_cpu_cost": round(on_cpu / off_cpu, 2),
                    "threads_speedup": round(off_wall / on_wall, 2),
                    "rule_threads": width * height >= rule,
                }
            )
            print(json.dumps(rows[-1]))
    video.THREADED_MIN_PIXELS = rule
    report = {
        "threaded": {"thread_type": video.THREAD_TYPE, "threads": video.DECODE_THREADS},
        "threaded_min_pixels": rule,
        "runs": RUNS,
        "cpus": os.cpu_count(),
        "rows": rows,
    }
    RESULT.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
