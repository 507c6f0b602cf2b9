"""CPU time and peak memory of decode_frames against a plain PyAV seek-and-decode loop, and
keyframe-snapped sampling against exact sampling, side by side in one run."""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import av

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.media import video, video_probe  # noqa: E402

log = logging.getLogger("bench.video_decode")
CACHE = ROOT / "bench" / ".cache"
INPUT = CACHE / "testsrc2_720p30_600s.mp4"
RESULT = ROOT / "bench" / "video_decode.json"
N_FRAMES, MAX_PIXELS, RUNS, TARGET_RATIO = 64, 50_176, 3, 1.2
KEYFRAME_TARGET_SPEEDUP, KEYFRAME_TARGET_ERROR = 15.0, 0.25  # error: of the keyframe interval


def ensure_ffmpeg() -> str:
    """Return the ffmpeg binary, installing it with apt-get when it is missing."""
    found = shutil.which("ffmpeg")
    if found:
        return found
    if not shutil.which("apt-get"):
        raise SystemExit("ffmpeg is missing and apt-get is not available; install ffmpeg and rerun")
    log.info("installing ffmpeg with apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "ffmpeg"], check=True, env=env)
    return shutil.which("ffmpeg") or "ffmpeg"


def ensure_input(ffmpeg: str) -> Path:
    """A 10-minute 1280x720 30 fps H.264 test pattern (GOP 250), made once and cached."""
    if INPUT.exists():
        return INPUT
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = INPUT.with_suffix(".tmp.mp4")
    log.info("encoding %s (a few minutes)", INPUT)
    cmd = [ffmpeg, "-y", "-loglevel", "error", "-f", "lavfi"]
    cmd += ["-i", "testsrc2=size=1280x720:rate=30", "-t", "600", "-c:v", "libx264"]
    cmd += ["-g", "250", "-preset", "veryfast", "-pix_fmt", "yuv420p", str(tmp)]
    subprocess.run(cmd, check=True)
    tmp.replace(INPUT)
    return INPUT


def ours(path: Path, times: list[float]) -> int:
    video_probe._probe_cached.cache_clear()  # count the probe too, as a cold request would
    return len(video.decode_frames(path, times, max_pixels=MAX_PIXELS))


def keyframe(path: Path, times: list[float]) -> int:
    """Keyframe-snapped sampling, cold: the probe and the keyframe index are read too."""
    video_probe._probe_cached.cache_clear()
    video._keyframes_cached.cache_clear()
    return len(video.decode_frames(path, times, max_pixels=MAX_PIXELS, sampling="keyframe"))


def keyframe_timing(path: Path, times: list[float]) -> dict:
    """How far the keyframe-snapped frames are from their target times."""
    frames = video.decode_frames(path, times, max_pixels=MAX_PIXELS, sampling="keyframe")
    errors = [abs(f.timestamp - f.requested) for f in frames]
    keys = video.keyframe_times(path)
    interval = (keys[-1] - keys[0]) / (len(keys) - 1)
    mean = statistics.mean(errors)
    return {
        "keyframes": len(keys),
        "keyframe_interval_s": round(interval, 3),
        "mean_abs_error_s": round(mean, 3),
        "max_abs_error_s": round(max(errors), 3),
        "mean_error_over_interval": round(mean / interval, 3),
        "target_error_over_interval": KEYFRAME_TARGET_ERROR,
        "distinct_frames": len({f.timestamp for f in frames}),
    }


def plain(path: Path, times: list[float]) -> int:
    """The obvious loop: seek to each time, decode to the first frame at or after it, to RGB."""
    n = 0
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        for t in times:
            container.seek(int(t / stream.time_base), stream=stream, backward=True)
            for frame in container.decode(stream):
                if frame.time >= t:
                    frame.to_ndarray(format="rgb24")
                    n += 1
                    break
    return n


METHODS = {"ours": ours, "plain": plain, "keyframe": keyframe}


def cpu_seconds(fn, path: Path, times: list[float]) -> tuple[float, float]:
    """(process CPU seconds over all threads, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    assert fn(path, times) == len(times)
    return time.process_time() - cpu, time.perf_counter() - wall


def peak_rss_mb(method: str, path: Path) -> float:
    """Peak RSS (MiB) of a fresh interpreter that runs one method once."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", method, str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip())


def own_peak_rss_mb() -> float:
    """This process's peak RSS. Linux's ru_maxrss carries the parent's peak over fork and exec,
    so read VmHWM, which starts afresh with the new address space; ru_maxrss elsewhere."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child(method: str, path: Path) -> None:
    times = video.overview_timestamps(video.probe(path).duration, N_FRAMES)
    if method != "imports_only":
        METHODS[method](path, times)
    print(own_peak_rss_mb())


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    path = ensure_input(ensure_ffmpeg())
    info = video.probe(path)
    times = video.overview_timestamps(info.duration, N_FRAMES)
    runs: dict[str, list[tuple[float, float]]] = {m: [] for m in METHODS}
    for _ in range(RUNS):  # interleaved, so drift affects both alike
        for name, fn in METHODS.items():
            runs[name].append(cpu_seconds(fn, path, times))
    cpu = {m: statistics.median(c for c, _ in r) for m, r in runs.items()}
    wall = {m: statistics.median(w for _, w in r) for m, r in runs.items()}
    result = {
        "input": {
            "path": str(path.relative_to(ROOT)),
            **{k: getattr(info, k) for k in ("duration", "fps", "width", "height", "codec")},
        },
        "frames": N_FRAMES,
        "max_pixels": MAX_PIXELS,
        "runs": RUNS,
        "ours_cpu_s": round(cpu["ours"], 3),
        "plain_cpu_s": round(cpu["plain"], 3),
        "ratio_cpu": round(cpu["ours"] / cpu["plain"], 3),
        "ours_wall_s": round(wall["ours"], 3),
        "plain_wall_s": round(wall["plain"], 3),
        "target_ratio": TARGET_RATIO,
        "keyframe_cpu_s": round(cpu["keyframe"], 3),
        "keyframe_wall_s": round(wall["keyframe"], 3),
        "exact_over_keyframe_cpu": round(cpu["ours"] / cpu["keyframe"], 1),
        "target_exact_over_keyframe_cpu": KEYFRAME_TARGET_SPEEDUP,
        "keyframe_timing": keyframe_timing(path, times),
        "peak_rss_mb": {m: round(peak_rss_mb(m, path), 1) for m in ("imports_only", *METHODS)},
        "all_runs_cpu_s": {m: [round(c, 3) for c, _ in r] for m, r in runs.items()},
        "settings": {
            "thread_type": video.THREAD_TYPE,
            "decode_threads": video.DECODE_THREADS,
            "skip_margin_s": video.SKIP_MARGIN,
        },
        "env": {
            "python": platform.python_version(),
            "av": av.__version__,
            "ffmpeg": av.library_versions.get("libavcodec"),
            "cpus": os.cpu_count(),
        },
    }
    RESULT.write_text(json.dumps(result, indent=2) + "\n")
    log.info("%s", json.dumps(result, indent=2))
    if result["ratio_cpu"] > TARGET_RATIO:
        log.warning("decode_frames takes %.2fx the plain loop's CPU time", result["ratio_cpu"])
    if result["exact_over_keyframe_cpu"] < KEYFRAME_TARGET_SPEEDUP:
        log.warning("keyframe sampling saves only %.1fx", result["exact_over_keyframe_cpu"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child", nargs=2, metavar=("METHOD", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
    else:
        main()
