"""Where the verify gate wins and where it loses in a board study.

The verified board's samples are split by whether the main agent looked again, that is
whether its board holds a note from a later turn (the gate withheld a note even after its own
second looks, and the main agent asked for the window anew). Each part is scored on the
verified board and, for the same samples, on the shared board of the same study.

    .venv/bin/python bench/nano_gate_split.py --study bench/nano_study.json \\
        --json bench/nano_gate_split.json

The study's run folders (each table's ``run``) must still exist: they hold the samples and
the boards.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from evals.records import SAMPLES_FILE, SampleLog
from graphs.store.sqlite_board import Board

BOARD_FILE = "board.sqlite"


def samples(run: Path) -> dict[str, dict]:
    """The run's samples by sample id, read as `eval run` reads its own log (the last line
    of an id wins; a torn or damaged line counts for none)."""
    for name in (SAMPLES_FILE, BOARD_FILE):
        if not (run / name).is_file():
            raise SystemExit(f"{run} has no {name}: pass a study whose run folders still exist")
    return SampleLog(run).read()


def looked_again(run: Path, trace_ids) -> set[str]:
    """Those of `trace_ids` whose board holds a note from a turn after the first."""
    board = Board(run / BOARD_FILE, mark_stale=False)
    try:
        return {t for t in trace_ids if any(note.turn > 0 for note in board.notes(t))}
    finally:
        board.close()


def score(row: dict) -> float:
    return float((row.get("metrics") or {}).get("score") or 0.0)


def split(verified: Path, shared: Path) -> dict[str, dict]:
    """Per part: how many samples, their mean score on the verified and on the shared board."""
    on_verified, on_shared = samples(verified), samples(shared)
    again = looked_again(verified, [row["trace_id"] for row in on_verified.values()])
    ids = {"one turn": [], "looked again": []}
    for sample_id, row in on_verified.items():
        ids["looked again" if row["trace_id"] in again else "one turn"].append(sample_id)
    return {
        part: {
            "samples": len(chosen),
            "verified": round(statistics.fmean(score(on_verified[i]) for i in chosen), 4),
            "shared": round(statistics.fmean(score(on_shared[i]) for i in chosen), 4),
        }
        for part, chosen in ids.items()
        if chosen
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--study", type=Path, required=True, help="bench/nano_study.py's JSON.")
    parser.add_argument("--configs", nargs="+", default=["verified", "verified_length"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    study = json.loads(args.study.read_text())
    tables = {
        noise: {
            config: split(Path(table[config]["run"]), Path(table["shared"]["run"]))
            for config in args.configs
            if config in table
        }
        for noise, table in study["tables"].items()
        if "shared" in table
    }
    result = {"study": str(args.study), "weights_sha256_12": study.get("weights_sha256_12")}
    result["tables"] = tables
    print(json.dumps(tables, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
