"""bench/nano_step_times.py: step times read from both log formats the rebuild writes."""

from __future__ import annotations

import json

import pytest

from tests.support.bench_scripts import load_bench

step_times = load_bench("nano_step_times")

CONSOLE_LOG = """\
2026-12-07 01:21:27,762 INFO init done at 378.2 s
2026-12-07 01:24:54,071 INFO sft {'step': 20, 'lr': 0.0004, 'tiers': [0.0, 0.5], 'elapsed_s': 30.0}
2026-12-07 01:25:12,876 INFO sft {'step': 40, 'lr': 0.0008, 'elapsed_s': 62.0}
2026-12-07 01:25:36,618 INFO sft {'step': 60, 'lr': 0.001, 'elapsed_s': 90.0}
"""


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_both_formats_give_the_elapsed_seconds_of_each_logged_step(tmp_path):
    log = tmp_path / "stage.log"
    log.write_text(CONSOLE_LOG)
    shipped = _jsonl(
        tmp_path / "sft.jsonl",
        [{"schedule": {"steps": 60}}, {"warm_up": None}, {"step": 20, "elapsed_s": 15.0}],
    )
    assert step_times.elapsed_by_step(log) == {20: 30.0, 40: 62.0, 60: 90.0}
    assert step_times.elapsed_by_step(shipped) == {20: 15.0}


def test_ratios_are_taken_at_the_steps_every_log_shares(tmp_path):
    then = _jsonl(
        tmp_path / "then.jsonl", [{"step": 20, "elapsed_s": 15.0}, {"step": 40, "elapsed_s": 31.0}]
    )
    log = tmp_path / "stage.log"
    log.write_text(CONSOLE_LOG)
    report = step_times.compare({"then": then, "today": log})
    assert report["last_shared_step"] == 40
    assert report["ratio_to_then"] == {"today": {20: 2.0, 40: 2.0}}


def test_logs_with_no_step_in_common_are_refused(tmp_path):
    then = _jsonl(tmp_path / "then.jsonl", [{"step": 10, "elapsed_s": 5.0}])
    log = tmp_path / "stage.log"
    log.write_text(CONSOLE_LOG)
    with pytest.raises(SystemExit, match="share no logged step"):
        step_times.compare({"then": then, "today": log})
