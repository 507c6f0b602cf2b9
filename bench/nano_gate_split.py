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
import sqlite3
import statistics
from contextlib import closing
from pathlib import Path

PARTS = ("one turn", "looked again")


def samples(run: Path) -> dict[str, dict]:
    """The run's scored samples by sample id."""
    rows = (json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines() if line)
    return {row["sample_id"]: row for row in rows}


def looked_again(run: Path) -> set[str]:
    """The runs (trace ids) whose board holds a note from a turn after the first."""
    uri = f"file:{run / 'board.sqlite'}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as db:
        return {r for (r,) in db.execute("SELECT DISTINCT run_id FROM notes WHERE turn > 0")}


def score(row: dict) -> float:
    return float((row.get("metrics") or {}).get("score") or 0.0)


def split(verified: Path, shared: Path) -> dict[str, dict]:
    """Per part: how many samples, their mean score on the verified and on the shared board."""
    on_verified, on_shared = samples(verified), samples(shared)
    again = looked_again(verified)
    ids = {part: [] for part in PARTS}
    for sample_id, row in on_verified.items():
        ids[PARTS[row["trace_id"] in again]].append(sample_id)
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
