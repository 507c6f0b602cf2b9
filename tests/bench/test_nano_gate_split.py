"""bench/nano_gate_split.py splits a study's verified samples by whether the main agent looked
again, reading boards the project's own board wrote."""

from __future__ import annotations

import json

import pytest

from graphs.store.board import Note
from graphs.store.sqlite_board import Board
from tests.support.bench_scripts import load_bench


@pytest.fixture(scope="module")
def gate_split():
    return load_bench("nano_gate_split")


def write_run(folder, scores: dict[str, float], later_turn: set[str] = frozenset()):
    """A run folder: samples.jsonl with these scores, and a board whose runs in `later_turn`
    hold a note from turn 1 (every run holds one from turn 0)."""
    folder.mkdir()
    board = Board(folder / "board.sqlite")
    lines = []
    for n, (sample_id, value) in enumerate(scores.items()):
        run_id = f"{folder.name}-{n}"
        board.start_run(run_id, video="v.mp4", question=sample_id, settings={}, thread_id=run_id)
        for turn in (0, 1) if sample_id in later_turn else (0,):
            note = Note(
                run_id, f"t{turn}c0", "sub", turn, 0, 0.0, 10.0, [1.0], "No coloured shapes."
            )
            board.add_note(note)
        row = {"sample_id": sample_id, "trace_id": run_id, "metrics": {"score": value}}
        lines.append(json.dumps(row))
    board.close()
    (folder / "samples.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_the_samples_that_looked_again_are_scored_apart_on_both_boards(gate_split, tmp_path):
    verified = write_run(tmp_path / "verified", {"a": 1.0, "b": 0.0, "c": 0.5}, later_turn={"b"})
    shared = write_run(tmp_path / "shared", {"a": 0.0, "b": 1.0, "c": 1.0}, later_turn={"a"})
    study = tmp_path / "study.json"
    runs = {"verified": {"run": str(verified)}, "shared": {"run": str(shared)}}
    study.write_text(json.dumps({"weights_sha256_12": "w", "tables": {"noise": runs}}))
    result = gate_split.main(["--study", str(study), "--json", str(tmp_path / "out.json")])
    # the shared board's own later turns do not move a sample: the verified board's decide
    assert result["tables"]["noise"]["verified"] == {
        "one turn": {"samples": 2, "verified": 0.75, "shared": 0.5},
        "looked again": {"samples": 1, "verified": 0.0, "shared": 1.0},
    }
    assert json.loads((tmp_path / "out.json").read_text()) == result


def test_a_study_whose_run_folder_is_gone_names_it(gate_split, tmp_path):
    shared = write_run(tmp_path / "shared", {"a": 1.0})
    study = tmp_path / "study.json"
    runs = {"verified": {"run": str(tmp_path / "gone")}, "shared": {"run": str(shared)}}
    study.write_text(json.dumps({"tables": {"noise": runs}}))
    with pytest.raises(SystemExit, match=r"gone has no samples\.jsonl"):
        gate_split.main(["--study", str(study)])
    assert not (tmp_path / "gone").exists()  # nothing made in its place
