"""Plot GRPO runs: format reward f_tau and tool-use rate kappa over steps, one line per run.

    python -m training.plot runs/grpo/grpo.jsonl runs/para/grpo.jsonl --out fig.png

Each run is labelled with its arm and folder; ``--smooth N`` draws a trailing mean over N
steps (the raw points stay faint behind it).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path

PANELS = (("f_tau", "format reward f_tau"), ("kappa", "tool-use rate kappa"))


def read_run(path: str | Path) -> list[dict]:
    """The JSON lines of one run (blank lines skipped), in step order."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return sorted((json.loads(line) for line in lines if line.strip()), key=lambda r: r["step"])


def trailing_mean(values: Sequence[float | None], window: int) -> list[float | None]:
    """Mean of the last ``window`` known values at each point.

    >>> trailing_mean([1.0, None, 3.0, 5.0], 2)
    [1.0, 1.0, 2.0, 4.0]
    """
    out, seen = [], []
    for value in values:
        if value is not None:
            seen.append(value)
        recent = seen[-window:]
        out.append(sum(recent) / len(recent) if recent else None)
    return out


def plot_runs(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    smooth: int = 1,
    panels: Sequence[tuple[str, str]] = PANELS,
    title: str | None = None,
) -> Path:
    """One panel per (log key, title) of ``panels`` (default f_tau, kappa) over steps for
    every run in ``paths``; writes ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), sharex=True)
    for path in paths:
        rows = read_run(path)
        steps = [r["step"] for r in rows]
        arm = rows[0].get("arm", "?") if rows else "?"
        label = f"{arm} ({Path(path).parent.name or Path(path).stem})"
        for ax, (key, _) in zip(axes, panels, strict=True):
            values = [r.get(key) for r in rows]
            curve = [math.nan if v is None else v for v in trailing_mean(values, max(smooth, 1))]
            (line,) = ax.plot(steps, curve, label=label)
            if smooth > 1:
                raw = [math.nan if v is None else v for v in values]
                ax.plot(steps, raw, color=line.get_color(), alpha=0.25, lw=0.8)
    for ax, (_, panel) in zip(axes, panels, strict=True):
        ax.set_title(panel)
        ax.set_xlabel("step")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="grpo.jsonl logs, one per run")
    parser.add_argument("--out", type=Path, required=True, help="Image to write (.png, .pdf)")
    parser.add_argument("--smooth", type=int, default=1, help="Trailing-mean window in steps")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.runs if not p.is_file()]
    if missing:
        parser.error(f"no such log: {', '.join(missing)}")
    print(plot_runs(args.runs, args.out, smooth=args.smooth))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
