"""Peak memory of one CLI run on a 10-minute 720p H.264 file.

The run: 64 overview frames, then 5 parallel crop_video calls of 16 frames each, then an
answer, through `app.py run` in its own process against a scripted OpenAI-compatible server
(in this process). Frames are downscaled and JPEG-encoded as soon as they are decoded, so
the process should stay far below the size of the decoded video. Target: under 600 MB.

    python bench/run_memory.py   # writes bench/run_memory.json
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.video_decode import ensure_ffmpeg, ensure_input  # noqa: E402
from testing.scripted import ScriptedServer, role_of, turn_of  # noqa: E402

WINDOWS = [(30, 60), (150, 180), (270, 300), (390, 420), (510, 540)]


def reply(body: dict) -> str:
    if role_of(body) == "sub_agent":
        return "A test pattern with a moving colour bar and a running clock."
    if turn_of(body):
        return "\n</think>\n<answer>A</answer>"
    blocks = "".join(
        '<tool_call>{"name": "crop_video", "arguments": '
        f'{{"start_time": {s}, "end_time": {e}}}}}</tool_call>'
        for s, e in WINDOWS
    )
    return "\n</think>\n" + blocks


def _vm_hwm_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    video = ensure_input(ensure_ffmpeg())
    home = Path(tempfile.mkdtemp(prefix="paravt-mem-"))
    with ScriptedServer(reply) as server:
        start = time.perf_counter()
        process = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "app.py"),
                "--home",
                str(home),
                "--env-file",
                "",
                "--endpoint",
                server.base_url,
                "run",
                "--video",
                str(video),
                "--question",
                "What is shown?",
                "--overview-frames",
                "64",
                "--crop-max-frames",
                "16",
                "--crop-fps",
                "1",
                "--max-parallel",
                "5",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        peak_kb = 0
        while process.poll() is None:  # VmHWM is the child's own high-water mark
            peak_kb = max(peak_kb, _vm_hwm_kb(process.pid))
            time.sleep(0.05)
        stdout, stderr = process.communicate()
        wall = time.perf_counter() - start
        sub_requests = sum(role_of(b) == "sub_agent" for b in server.requests)
    if process.returncode != 0:
        raise SystemExit(f"the run failed:\n{stderr}")
    peak_mb = peak_kb / 1024
    result = json.loads(stdout)
    report = {
        "video": str(video.name),
        "overview_frames": 64,
        "crop_calls": sub_requests,
        "frames_per_crop": 16,
        "status": result["status"],
        "frames_encoded": result["cost"]["frames_encoded"],
        "peak_rss_mb": round(peak_mb, 1),
        "target_mb": 600,
        "wall_s": round(wall, 2),
    }
    out = Path(__file__).with_suffix(".json")
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
