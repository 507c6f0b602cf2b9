"""The GRPO arms' dynamics: f_tau, kappa and accuracy per step, as a figure and as numbers.

    python -m training.nano.dynamics build/nano --out docs/figures/nano-dynamics.png

Reads ``ARM/grpo.jsonl`` of each arm under the build folder (``training.grpo``'s log).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from training.plot import read_run, trailing_mean

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


def plot(logs: dict[str, list[dict]], out: str | Path, *, smooth: int = 5) -> Path:
    """Three panels over steps, one line per arm: the trailing mean over `smooth` steps,
    the raw values faint behind it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(PANELS), figsize=(14, 4), sharex=True)
    for arm, rows in logs.items():
        steps = [r["step"] for r in rows]
        for ax, (key, _) in zip(axes, PANELS, strict=True):
            values = [r.get(key) for r in rows]
            mean = [math.nan if v is None else v for v in trailing_mean(values, smooth)]
            (line,) = ax.plot(steps, mean, label=f"{arm} (mean of {smooth} steps)")
            raw = [math.nan if v is None else v for v in values]
            ax.plot(steps, raw, color=line.get_color(), alpha=0.25, lw=0.8)
    for ax, (_, title) in zip(axes, PANELS, strict=True):
        ax.set_title(title)
        ax.set_xlabel("GRPO step")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small", loc="lower left")
    fig.suptitle("paravt-nano: plain GRPO and PARA-GRPO from the same SFT checkpoint")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=Path, help="The rebuild's folder (holds ARM/grpo.jsonl).")
    parser.add_argument("--arms", nargs="+", default=["grpo", "para_grpo"])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--smooth", type=int, default=5)
    args = parser.parse_args(argv)
    print(plot(arm_logs(args.build, args.arms), args.out, smooth=args.smooth))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
