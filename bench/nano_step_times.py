"""Compare the SFT step times of paravt-nano training runs at the steps their logs share.

A rebuild's minutes depend on the day's machine as much as on its recipe. Rerunning an older
recipe for a few hundred steps and reading both logs side by side tells the two apart: the
same recipe's ratio is the machine's, and a new recipe's against the old one on the same day is
the recipe's. Each log is either a shipped ``sft.jsonl`` (one JSON object per line) or a
rebuild's console log (``... INFO sft {'step': 20, ..., 'elapsed_s': 21.2}``).

    python bench/nano_step_times.py --log then=OLD/sft.jsonl --log today=OUT/stage.log \
        --json bench/nano_step_times.json
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def elapsed_by_step(path: Path) -> dict[int, float]:
    """`{step: elapsed seconds}` from a ``sft.jsonl`` or a rebuild's console log."""
    steps = {}
    for line in path.read_text().splitlines():
        if line.startswith("{"):
            record = json.loads(line)
        elif " INFO sft {" in line:
            record = ast.literal_eval(line[line.index("{") :])
        else:
            continue
        if "step" in record and "elapsed_s" in record:
            steps[int(record["step"])] = float(record["elapsed_s"])
    return steps


def compare(logs: dict[str, Path]) -> dict:
    runs = {name: elapsed_by_step(path) for name, path in logs.items()}
    shared = sorted(set.intersection(*(set(steps) for steps in runs.values())))
    if not shared:
        raise SystemExit("the logs share no logged step: nothing to compare")
    first = next(iter(runs))
    return {
        "logs": {name: str(path) for name, path in logs.items()},
        "last_shared_step": shared[-1],
        "elapsed_s": {name: {s: steps[s] for s in shared} for name, steps in runs.items()},
        f"ratio_to_{first}": {
            name: {s: round(steps[s] / runs[first][s], 3) for s in shared}
            for name, steps in runs.items()
            if name != first
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--log", action="append", required=True, metavar="NAME=PATH", help="twice or more"
    )
    parser.add_argument("--json", type=Path, default=ROOT / "nano_step_times.json")
    args = parser.parse_args()
    logs = dict(item.split("=", 1) for item in args.log)
    if len(logs) < 2:
        parser.error("give --log NAME=PATH at least twice")
    report = compare({name: Path(path) for name, path in logs.items()})
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report[f"ratio_to_{next(iter(logs))}"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
