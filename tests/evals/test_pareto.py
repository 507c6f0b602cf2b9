"""Cost-score Pareto analysis: the front with ties, vision-aware cost, run names, the table."""

from __future__ import annotations

import dataclasses
import doctest
import json
import math

import pytest

from evals import pareto, run_labels
from evals.costs import run_costs
from evals.pareto import Point
from evals.spec import EvalSpec
from evals.study_configs import STUDY_CONFIGS
from evals.tasks import get_task
from graphs.context import Context
from tests.support.pareto import POINTS


def test_doctests_pass():
    assert doctest.testmod(pareto).failed == 0


def test_front_handles_ties_and_dominated_points():
    assert [p.name for p in pareto.pareto_front(POINTS)] == ["G", "A", "D", "E"]
    assert [p.name for p in pareto.dominated(POINTS)] == ["B", "C", "F"]
    assert pareto.pareto_front([]) == [] and pareto.dominated([]) == []
    assert [p.name for p in pareto.pareto_front([Point("x", 1, 0.5)])] == ["x"]


def test_front_is_order_independent():
    assert pareto.pareto_front(POINTS) == pareto.pareto_front(list(reversed(POINTS)))


def test_table_and_markdown():
    rows = {r["name"]: r for r in pareto.table(POINTS)}
    assert [r["name"] for r in pareto.table(POINTS)][:3] == ["G", "A", "B"]  # by cost
    assert {n for n, r in rows.items() if r["on_front"]} == {"G", "A", "D", "E"}
    assert rows["B"]["dominated_by"] == "A" and rows["C"]["dominated_by"] == "A"
    assert rows["F"]["dominated_by"] == "D"
    assert rows["H"]["on_front"] is False and rows["H"]["dominated_by"] is None
    keys = {"name", "run", "cost", "accuracy", "metric", "on_front", "dominated_by", "cost_basis"}
    assert set(rows["A"]) == keys
    text = pareto.markdown_table(POINTS)
    lines = text.splitlines()
    assert lines[0].startswith("| run | folder | cost") and len(lines) == 2 + len(POINTS)
    assert "| F |  | 400 | 0.650 | no (D) |" in text
    assert "| D |  | 300 | 0.700 | yes |" in text
    assert "| H |  | n/a | 0.900 | no (invalid) |" in text


def sample_cost(calls: int, *, image_per_call: int | None, text_per_call: int = 200) -> dict:
    """One sample's cost as evals.costs.sample_cost records it: each of ``calls`` requests
    re-encodes the one image, so prompt tokens and image tokens both grow with calls."""
    image = image_per_call or 0
    return {
        "prompt_tokens": calls * (text_per_call + image),
        "completion_tokens": calls * 50,
        "image_tokens": calls * image_per_call if image_per_call is not None else None,
        "frames_encoded": calls,
        "frames_overview": calls,
        "frames_crops": 0,
        "model_calls": calls,
        "tool_calls": 0,
        "main_turns": calls,
        "wall_s": 1.0,
        "used_tools": False,
        "well_formed_turns": calls,
    }


def results_for(calls: int, image_per_call: int | None = 800, n: int = 4) -> dict:
    return {"costs": run_costs([sample_cost(calls, image_per_call=image_per_call)] * n)}


def test_cost_counts_every_image_encoding():
    once, thrice = results_for(1), results_for(3)
    one, three = pareto.cost_breakdown(once), pareto.cost_breakdown(thrice)
    assert one["image"] == 800 and three["image"] == 3 * 800
    assert one["text_in"] == 200 and three["text_in"] == 600
    assert one["image_source"] == "reported" and one["frame_tokens"] is None
    assert pareto.total_cost(once) == 200 + 50 + 800  # = prompt + completion at weight 1
    assert pareto.total_cost(thrice) == 3 * (200 + 50 + 800)
    weighted = pareto.total_cost(thrice, image_token_weight=2.0)
    assert weighted == 600 + 150 + 2 * 2400
    assert pareto.total_cost(thrice, prompt_includes_images=False) == 3000 + 150 + 2400


def test_cost_falls_back_to_frames_times_assumed_tokens():
    once, thrice = results_for(1, None), results_for(3, None)
    breakdown = pareto.cost_breakdown(thrice)
    assert breakdown["image_source"] == "assumed"
    assert breakdown["frame_tokens"] == pareto.DEFAULT_FRAME_TOKENS
    assert breakdown["image"] == 3 * pareto.DEFAULT_FRAME_TOKENS
    # prompt tokens include the image: at weight 1 the cost is prompt + completion ...
    assert pareto.total_cost(thrice) == 600 + 150
    # ... and a text-only prompt count gets the assumed vision tokens added, per encoding
    text_only = {"prompt_includes_images": False, "frame_tokens": 100}
    assert pareto.total_cost(once, **text_only) == 200 + 50 + 100
    assert pareto.total_cost(thrice, **text_only) == 600 + 150 + 300


def test_cost_refuses_a_run_without_samples():
    with pytest.raises(ValueError, match="no scored samples"):
        pareto.total_cost({"costs": {"samples": 0}})
    with pytest.raises(ValueError):
        pareto.total_cost({})


def write_run(folder, *, task="needle", metrics, costs, profile="official"):
    folder.mkdir(parents=True)
    results = {"task": task, "profile": profile, "metrics": metrics, "costs": costs}
    (folder / f"results_{profile}.json").write_text(json.dumps(results))
    return folder


def test_load_points_reads_the_task_primary(tmp_path):
    solo = write_run(tmp_path / "solo", metrics={"mean_score": 0.6}, costs=results_for(1)["costs"])
    board = write_run(
        tmp_path / "board", metrics={"mean_score": 0.5}, costs=results_for(3, None)["costs"]
    )
    points = pareto.load_points([solo, board])
    assert [(p.name, p.accuracy) for p in points] == [("solo", 0.6), ("board", 0.5)]
    assert points[0].cost == 1050 and points[0].cost_basis == "image tokens reported"
    assert points[1].cost_basis == "frames x 49 tokens (assumed)"
    weighted = pareto.load_points([solo], image_token_weight=0.5)[0]
    assert weighted.cost == 200 + 50 + 400 and "image weight 0.5" in weighted.cost_basis
    assert math.isnan(pareto.load_points([solo], metric="open_f1")[0].accuracy)
    with pytest.raises(FileNotFoundError, match="lmms_eval"):
        pareto.load_points([solo], profile="lmms_eval")


def test_load_points_uses_each_task_primary(tmp_path):
    primary = get_task("videomme").primary_for("lmms_eval")
    run = write_run(
        tmp_path / "vmme",
        task="videomme",
        metrics={primary: 0.7, "answered": 0.9},
        costs=results_for(1)["costs"],
        profile="lmms_eval",
    )
    point = pareto.load_points([run], profile="lmms_eval")[0]
    assert (point.accuracy, point.metric) == (0.7, primary)


def write_spec_run(root, spec: EvalSpec, score: float = 0.5):
    """A run folder named as the runner names it, with its spec.json and a results file."""
    folder = write_run(
        spec.folder(root), metrics={"mean_score": score}, costs=results_for(1)["costs"]
    )
    (folder / "spec.json").write_text(json.dumps(spec.to_json()))
    return folder


def arm_spec(name: str, **context) -> EvalSpec:
    """The spec `eval study` writes for one arm (full Context, as the CLI passes it)."""
    config = STUDY_CONFIGS[name]
    full = dataclasses.asdict(Context(**get_task("needle").context, **config.context))
    return EvalSpec(
        task="needle",
        data_dir="/data/needle",
        model="paravt-nano",
        context={**full, **context},
        votes=config.votes,
    )


def test_points_are_named_by_study_arm_and_keep_their_folder(tmp_path):
    arms = ["single", "two_agent", "vote5", "verified", "verified_length", "isolated", "shared"]
    folders = [write_spec_run(tmp_path, arm_spec(name)) for name in arms]
    points = pareto.load_points(folders)
    assert [p.name for p in points] == arms
    assert [p.run for p in points] == [f.name for f in folders]  # task-spechash, kept
    assert {p.metric for p in points} == {"mean_score"}
    table = pareto.markdown_table(points)
    assert f"| vote5 | {folders[2].name} |" in table


def test_other_runs_are_named_by_what_sets_them_apart(tmp_path):
    def sequential(model="paravt-nano", **context):
        spec = arm_spec("isolated", dispatch="sequential", **context)  # no arm runs sequential
        return dataclasses.replace(spec, model=model)

    custom = [
        sequential(max_turns=5),
        sequential(max_turns=5, board_mode="shared"),
        sequential("qwen3-vl-8b", max_turns=2),
    ]
    folders = [write_spec_run(tmp_path, spec) for spec in custom]
    assert [p.name for p in pareto.load_points(folders)] == [
        "model=paravt-nano, max_turns=5, board_mode=isolated",
        "model=paravt-nano, max_turns=5, board_mode=shared",
        "model=qwen3-vl-8b, max_turns=2, board_mode=isolated",
    ]
    # two runs of one arm (here with two turn budgets) keep the arm name, told apart
    twins = [arm_spec("verified"), arm_spec("verified", max_turns=5)]
    folders = [write_spec_run(tmp_path / "twins", spec) for spec in twins]
    names = [p.name for p in pareto.load_points(folders)]
    assert names == ["verified (max_turns=3)", "verified (max_turns=5)"]
    # the same arm in two output roots has one spec, so one hash: named alike, kept apart by
    # the folder column
    same = [write_spec_run(tmp_path / root, arm_spec("vote5")) for root in ("r1", "r2")]
    assert run_labels.label_runs(same) == [f"vote5 ({arm_spec('vote5').hash[:6]})"] * 2
    # a folder without spec.json keeps its folder name
    bare = write_run(tmp_path / "bare", metrics={"mean_score": 0.4}, costs=results_for(1)["costs"])
    assert [p.name for p in pareto.load_points([same[0], bare])] == ["vote5", "bare"]
