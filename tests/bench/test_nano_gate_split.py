"""bench/nano_gate_split.py splits a study's verified samples by whether the main agent looked
again, reading boards the project's own board wrote."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from graphs.store.board import Note
from graphs.store.sqlite_board import Board
from tests.support.bench_scripts import load_bench


@pytest.fixture(scope="module")
def gate_split():
    return load_bench("nano_gate_split")


#: A sample's notes: (turn, window start, window end, verdict).
ONE_TURN = [(0, 0.0, 10.0, None)]


def write_run(folder, scores: dict[str, float], notes: dict[str, list] | None = None):
    """A run folder: samples.jsonl with these scores, and a board with each sample's `notes`
    (default: :data:`ONE_TURN`)."""
    folder.mkdir()
    board = Board(folder / "board.sqlite")
    lines = []
    for n, (sample_id, value) in enumerate(scores.items()):
        run_id = f"{folder.name}-{n}"
        board.start_run(run_id, video="v.mp4", question=sample_id, settings={}, thread_id=run_id)
        for call, (turn, start, end, verdict) in enumerate((notes or {}).get(sample_id, ONE_TURN)):
            content = "No coloured shapes."
            note = Note(run_id, f"t{turn}c{call}", "sub", turn, call, start, end, [start], content)
            board.add_note(replace(note, verdict=verdict))
        row = {"sample_id": sample_id, "trace_id": run_id, "metrics": {"score": value}}
        lines.append(json.dumps(row))
    board.close()
    (folder / "samples.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_the_samples_that_looked_again_are_scored_apart_on_both_boards(gate_split, tmp_path):
    again = [(0, 0.0, 10.0, "UNSUPPORTED"), (1, 0.0, 10.0, "SUPPORTED")]
    verified = write_run(tmp_path / "verified", {"a": 1.0, "b": 0.0, "c": 0.5}, {"b": again})
    shared = write_run(
        tmp_path / "shared", {"a": 0.0, "b": 1.0, "c": 1.0}, {"a": [*ONE_TURN, (1, 0, 10, None)]}
    )
    study = tmp_path / "study.json"
    runs = {"verified": {"run": str(verified)}, "shared": {"run": str(shared)}}
    study.write_text(json.dumps({"weights_sha256_12": "w", "tables": {"noise": runs}}))
    result = gate_split.main(["--study", str(study), "--json", str(tmp_path / "out.json")])
    # the shared board's own later turns do not move a sample: the verified board's decide
    assert result["tables"]["noise"]["verified"] == {
        "one turn": {"samples": 2, "verified": 0.75, "shared": 0.5},
        "looked again": {
            "samples": 1,
            "verified": 0.0,
            "shared": 1.0,
            "why": {"every note back": {"samples": 1, "verified": 0.0, "shared": 1.0}},
        },
    }
    assert json.loads((tmp_path / "out.json").read_text()) == result


@pytest.mark.parametrize(
    ("notes", "why"),
    [
        ([(0, 0, 60, "SUPPORTED")], None),
        ([(0, 0, 60, "UNSUPPORTED"), (0, 60, 120, "SUPPORTED"), (1, 0, 60, "SUPPORTED")], "back"),
        ([(0, 0, 60, "UNCERTAIN"), (1, 0, 60, "UNSUPPORTED")], "again"),
        ([(0, 0, 60, "UNSUPPORTED"), (1, 0, 120, "SUPPORTED")], "other"),
        ([(0, 0, 60, "UNSUPPORTED"), (0, 60, 120, "UNSUPPORTED"), (1, 0, 60, None)], "other"),
        ([(0, 0, 60, "SUPPORTED"), (1, 60, 120, "SUPPORTED")], "unprompted"),
    ],
)
def test_a_look_again_is_told_by_what_became_of_the_withheld_windows(gate_split, notes, why):
    board_notes = [
        replace(Note("r", f"t{t}c{k}", "sub", t, k, a, b, [a], "No coloured shapes."), verdict=v)
        for k, (t, a, b, v) in enumerate(notes)
    ]
    names = {
        "back": gate_split.NOTES_BACK,
        "again": gate_split.WITHHELD_AGAIN,
        "other": gate_split.OTHER_WINDOWS,
        "unprompted": gate_split.UNPROMPTED,
    }
    assert gate_split.after_withheld(board_notes) == names.get(why)


def test_a_study_whose_run_folder_is_gone_names_it(gate_split, tmp_path):
    shared = write_run(tmp_path / "shared", {"a": 1.0})
    study = tmp_path / "study.json"
    runs = {"verified": {"run": str(tmp_path / "gone")}, "shared": {"run": str(shared)}}
    study.write_text(json.dumps({"tables": {"noise": runs}}))
    with pytest.raises(SystemExit, match=r"gone has no samples\.jsonl"):
        gate_split.main(["--study", str(study)])
    assert not (tmp_path / "gone").exists()  # nothing made in its place
