"""What a paravt-nano rebuild cost, read from the build folder's own logs.

    OMP_NUM_THREADS=2 /usr/bin/time -v python -m training.nano.rebuild --out build/nano \
        2> build/nano/time.log
    python bench/nano_rebuild.py --out build/nano --time-log build/nano/time.log

Writes ``bench/nano_rebuild.json``: the seconds at the end of each stage
(``OUT/timings.json``), the warm-ups and SFT (``OUT/sft/sft.jsonl``), the GRPO arms
(``OUT/ARM/grpo.jsonl``), the wall time and peak resident memory that ``/usr/bin/time -v``
measured for the whole command, the checkpoint's size and parameter count, and the sha256
prefix of each stage's weights (two rebuilds by the same command should match).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
from pathlib import Path

ARMS = ("grpo", "para_grpo")
STAGE_WEIGHTS = {
    "sft": "sft",
    "polish": "polish",
    "grpo": "grpo/checkpoint",
    "para_grpo": "para_grpo/checkpoint",
}


def time_log(text: str) -> dict:
    """Wall minutes and peak resident GB from the report of ``/usr/bin/time -v``.

    >>> time_log("Elapsed (wall clock) time (h:mm:ss or m:ss): 1:49:06\\n"
    ...          "Maximum resident set size (kbytes): 2590000\\n")
    {'total_minutes_wall': 109.1, 'peak_rss_gb': 2.59}
    """
    wall = re.search(r"Elapsed \(wall clock\) time.*: ([\d:.]+)", text)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if not wall or not rss:
        raise ValueError("not a /usr/bin/time -v report: no wall clock or maximum resident size")
    seconds = 0.0
    for part in wall.group(1).split(":"):
        seconds = seconds * 60 + float(part)
    return {
        "total_minutes_wall": round(seconds / 60, 1),
        "peak_rss_gb": round(int(rss.group(1)) / 1e6, 2),
    }


def sft_record(log_path: Path) -> tuple[dict | None, dict]:
    """(warm-up, SFT) figures from ``sft.jsonl``: its schedule line, warm-up line, steps.
    A roles stage (``--base``) has no warm-up: None."""
    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    schedule = lines[0]["schedule"]
    warm = lines[1]["warm_up"]
    steps = [line for line in lines if "step" in line]
    last = steps[-1]
    warm_up = warm and {
        "copy_steps": schedule["copy_warmup_steps"],
        "copy_loss_first_last": [warm["copy_loss"][0], warm["copy_loss"][-1]],
        "copy_seconds": warm["copy_s"],
        "vision_steps": schedule["vision_warmup_steps"],
        "frame_accuracy_last": warm["frame_accuracy"][-1],
        "vision_seconds": warm["vision_s"],
    }
    losses = {k.removeprefix("loss_"): v for k, v in last.items() if k.startswith("loss_")}
    sft = {
        "steps": last["step"],
        "seconds_in_loop": last["elapsed_s"],
        "seconds_per_step": round(last["elapsed_s"] / last["step"], 3),
        "final_losses": losses | {"frame_target_accuracy": last.get("aux_acc")},
        "rows": lines[0]["rows"],
        "schedule": schedule,
    }
    return warm_up, sft


def arm_record(log_path: Path) -> dict:
    """Steps, median and summed step seconds of one GRPO arm."""
    rows = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    seconds = [row["step_time_s"] for row in rows]
    return {
        "steps": len(rows),
        "median_step_seconds": round(statistics.median(seconds), 1),
        "sum_of_step_seconds": round(sum(seconds), 1),
    }


def weights(folder: Path) -> tuple[str, int]:
    """(sha256 prefix, bytes) of a checkpoint folder's ``model.safetensors``."""
    data = (folder / "model.safetensors").read_bytes()
    return hashlib.sha256(data).hexdigest()[:12], len(data)


def parameters(folder: Path) -> int:
    """How many parameters the checkpoint holds, from the safetensors header alone."""
    with (folder / "model.safetensors").open("rb") as file:
        size = int.from_bytes(file.read(8), "little")
        header = json.loads(file.read(size))
    total = 0
    for name, entry in header.items():
        if name != "__metadata__":
            count = 1
            for dim in entry["shape"]:
                count *= dim
            total += count
    return total


def record(out: Path, time_report: str, command: str) -> dict:
    """The whole record of the rebuild in `out`."""
    warm_up, sft = sft_record(out / "sft" / "sft.jsonl")
    stages = {
        s: out / f for s, f in STAGE_WEIGHTS.items() if (out / f / "model.safetensors").exists()
    }
    result = list(stages.values())[-1]  # PARA-GRPO's arm; SFT's with --grpo-steps 0
    return {
        "command": command,
        "seconds_at_end_of": json.loads((out / "timings.json").read_text()),
        "warm_up": warm_up,
        "sft": sft,
        **(
            {"polish": sft_record(out / "polish" / "sft.jsonl")[1]}
            if (out / "polish" / "sft.jsonl").exists()
            else {}
        ),
        "grpo_arms": {
            arm: arm_record(out / arm / "grpo.jsonl")
            for arm in ARMS
            if (out / arm / "grpo.jsonl").exists()
        },
        **time_log(time_report),
        "checkpoint_bytes": weights(result)[1],
        "parameters": parameters(result),
        "weights_sha256_prefix": {stage: weights(folder)[0] for stage, folder in stages.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="The rebuild's --out folder.")
    parser.add_argument("--time-log", type=Path, required=True, help="/usr/bin/time -v's report.")
    parser.add_argument(
        "--command",
        default="OMP_NUM_THREADS=2 /usr/bin/time -v python -m training.nano.rebuild --out OUT",
    )
    parser.add_argument("--json", type=Path, default=Path(__file__).with_suffix(".json"))
    args = parser.parse_args()
    for needed in (args.out / "timings.json", args.time_log):
        if not needed.exists():
            raise SystemExit(
                f"{needed}: missing; run the whole rebuild under /usr/bin/time -v first"
            )
    report = record(args.out, args.time_log.read_text(errors="replace"), args.command)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
