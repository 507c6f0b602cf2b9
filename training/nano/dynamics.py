"""The GRPO arms' dynamics: f_tau, kappa and accuracy per step, as a figure and as numbers.

    python -m training.nano.dynamics build/nano --out docs/figures/nano-dynamics.png

Reads ``ARM/grpo.jsonl`` of each arm under the build folder (``training.cpu_grpo``'s log).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from training.plot import plot_runs, read_run

PANELS = (
    ("f_tau", "format reward f_tau"),
    ("kappa", "tool-use rate kappa"),
    ("accuracy", "accuracy reward (rollouts)"),
)
KEYS = ("step", "f_tau", "kappa", "accuracy", "reward", "overview_frames", "response_length")


def arm_logs(build: str | Path, arms) -> dict[str, list[dict]]:
    """Each arm's log lines, in step order."""
    return {arm: read_run(Path(build) / arm / "grpo.jsonl") for arm in arms}


def summary(rows: list[dict], first: int = 10) -> dict:
    """Per-step numbers (the keys of :data:`KEYS`) and the means of the first and last
    `first` steps of one arm."""

    def mean(key, part):
        values = [r[key] for r in part if r.get(key) is not None]
        return round(sum(values) / len(values), 4) if values else None

    head, tail = rows[:first], rows[-first:]
    return {
        "steps": len(rows),
        f"first_{first}": {k: mean(k, head) for k in KEYS[1:5]},
        f"last_{first}": {k: mean(k, tail) for k in KEYS[1:5]},
        "min_f_tau": min((r["f_tau"] for r in rows if r.get("f_tau") is not None), default=None),
        "per_step": [{k: r.get(k) for k in KEYS} for r in rows],
    }


def plot(build: str | Path, arms, out: str | Path, *, smooth: int = 5) -> Path:
    """f_tau, kappa and rollout accuracy over steps, one line per arm (``training.plot``)."""
    paths = [Path(build) / arm / "grpo.jsonl" for arm in arms]
    title = "paravt-nano: plain GRPO and PARA-GRPO from the same SFT checkpoint"
    return plot_runs(paths, out, smooth=smooth, panels=PANELS, title=title)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=Path, help="The rebuild's folder (holds ARM/grpo.jsonl).")
    parser.add_argument("--arms", nargs="+", default=["grpo", "para_grpo"])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--smooth", type=int, default=5)
    args = parser.parse_args(argv)
    print(plot(args.build, args.arms, args.out, smooth=args.smooth))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
