"""Where the verify gate wins and where it loses in a board study.

The verified board's samples are split by whether the main agent looked again, that is
whether its board holds a note from a later turn (the gate withheld a note even after its own
second looks, and the main agent asked for the window anew). Each part is scored on the
verified board and, for the same samples, on the shared board of the same study.

The samples that looked again are split once more, by what happened to them on the board
(:func:`after_withheld`): the main agent asked for other windows than the withheld ones, or
for the same ones and had a note withheld again, or for the same ones and had each note
back; or it looked again though nothing was withheld.

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

from agents.verify import withheld
from evals.records import SAMPLES_FILE, SampleLog
from graphs.store.board import Note
from graphs.store.sqlite_board import Board

BOARD_FILE = "board.sqlite"


def samples(run: Path) -> dict[str, dict]:
    """The run's samples by sample id, read as `eval run` reads its own log (the last line
    of an id wins; a torn or damaged line counts for none)."""
    for name in (SAMPLES_FILE, BOARD_FILE):
        if not (run / name).is_file():
            raise SystemExit(f"{run} has no {name}: pass a study whose run folders still exist")
    return SampleLog(run).read()


#: What happened after the first turn, for a sample that looked again (:func:`after_withheld`).
OTHER_WINDOWS = "asked for other windows"
WITHHELD_AGAIN = "withheld again"
NOTES_BACK = "every note back"
UNPROMPTED = "nothing withheld"


def withheld_windows(notes: list[Note], turn: int) -> set[tuple[float, float]]:
    """The windows of `turn` whose note the gate did not support."""
    return {(n.start, n.end) for n in notes if n.turn == turn and withheld(n.verdict)}


def after_withheld(notes: list[Note]) -> str | None:
    """What became of a run's look again (None: it answered from its first turn's board)."""
    if not any(n.turn > 0 for n in notes):
        return None
    asked = {(n.start, n.end) for n in notes if n.turn == 1}
    first = withheld_windows(notes, 0)
    if not first:
        return UNPROMPTED
    if asked != first:
        return OTHER_WINDOWS
    return WITHHELD_AGAIN if withheld_windows(notes, 1) else NOTES_BACK


def looks_again(run: Path, trace_ids) -> dict[str, str]:
    """Those of `trace_ids` whose board holds a note from a later turn, with what became of
    that look (:func:`after_withheld`)."""
    board = Board(run / BOARD_FILE, mark_stale=False)
    try:
        found = {t: after_withheld(board.notes(t)) for t in trace_ids}
    finally:
        board.close()
    return {t: why for t, why in found.items() if why is not None}


def score(row: dict) -> float:
    return float((row.get("metrics") or {}).get("score") or 0.0)


def scored(ids: list[str], on_verified: dict, on_shared: dict) -> dict:
    return {
        "samples": len(ids),
        "verified": round(statistics.fmean(score(on_verified[i]) for i in ids), 4),
        "shared": round(statistics.fmean(score(on_shared[i]) for i in ids), 4),
    }


def split(verified: Path, shared: Path) -> dict[str, dict]:
    """Per part: how many samples, their mean score on the verified and on the shared board;
    the part that looked again also per what became of its look (``why``)."""
    on_verified, on_shared = samples(verified), samples(shared)
    again = looks_again(verified, [row["trace_id"] for row in on_verified.values()])
    ids: dict[str, list[str]] = {"one turn": [], "looked again": []}
    why: dict[str, list[str]] = {}
    for sample_id, row in on_verified.items():
        if row["trace_id"] in again:
            ids["looked again"].append(sample_id)
            why.setdefault(again[row["trace_id"]], []).append(sample_id)
        else:
            ids["one turn"].append(sample_id)
    parts = {part: scored(chosen, on_verified, on_shared) for part, chosen in ids.items() if chosen}
    if why:
        parts["looked again"]["why"] = {
            name: scored(chosen, on_verified, on_shared) for name, chosen in sorted(why.items())
        }
    return parts


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
