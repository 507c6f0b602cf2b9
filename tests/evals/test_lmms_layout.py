"""A run also writes lmms-eval's files, checked against files lmms-eval's own CLI wrote.

tests/data/lmms_eval/ holds what EvolvingLMMs-Lab/lmms-eval@75571cf wrote for videomme and
lvbench (three docs each, an API model's replies): its ``__main__.cli_evaluate``, evaluator,
evaluator_utils and EvaluationTracker, run offline with the dataset and the model faked
(provenance.json names the docs, replies and argv). The same replies through this project's
scorers must give the same files: names, key order, nesting, value types and values, except
where lmms_layout's docstring says why not.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from evals.cli import cmd_eval_rescore
from evals.lmms_layout import doc_hash, sanitize_model_name, write_lmms_eval_files
from evals.records import sample_to_json
from evals.results import score_records, summarize
from evals.runner import evaluate
from evals.sample import Sample
from evals.spec import EvalSpec
from evals.tasks import get_task
from tests.support.needle_eval import OracleModel, oracle, spec_for

REFERENCE = Path(__file__).parents[1] / "data" / "lmms_eval"
PROVENANCE = json.loads((REFERENCE / "provenance.json").read_text())
MODEL = "Qwen/Qwen3-VL-8B-Instruct"
VIDEOMME_METRIC = "videomme_perception_score"
# Fields that are None here by decision (lmms_layout's docstring), or in the reference only
# because its checkout is not a git repository.
MAY_BE_NONE = {"git_hash", "git_branch", "start_time", "end_time"}
MAY_BE_NONE |= {"total_evaluation_time_seconds"}
FREE_FORM = {"resolved_cli_args"}  # lmms-eval's argv there, this project's spec here
UNUSED_COST = {"model_calls": 1, "latency_s": 0.5, "image_tokens": None, "main_turns": 1}
UNUSED_COST |= dict.fromkeys(("frames_encoded", "frames_overview", "frames_crops"), 0)
UNUSED_COST |= {"tool_calls": 0, "wall_s": 0.5, "used_tools": False, "well_formed_turns": 1}


def reference(kind: str):
    (path,) = (REFERENCE / sanitize_model_name(MODEL)).glob(f"*_{kind}")
    if kind.endswith(".jsonl"):
        return [json.loads(line) for line in path.read_text().splitlines()]
    return json.loads(path.read_text())


def type_of(value) -> str:
    return "number" if type(value) in (int, float) else type(value).__name__


def assert_same_shape(ours, theirs, path="") -> None:
    """Same keys in the same order, same value types, recursively through dicts."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        assert list(ours) == list(theirs), path
        for key in theirs:
            if key in MAY_BE_NONE and None in (ours[key], theirs[key]):
                continue
            if key in FREE_FORM:
                assert isinstance(ours[key], dict), key
                continue
            assert_same_shape(ours[key], theirs[key], f"{path}.{key}")
    else:
        assert type(ours) is type(theirs) or {type_of(ours), type_of(theirs)} == {"number"}, (
            f"{path}: {ours!r} vs {theirs!r}"
        )


def task_hash(lines) -> str:
    marks = "".join(f"sample_{i}" + line["doc_hash"] for i, line in enumerate(lines))
    return hashlib.sha256(marks.encode()).hexdigest()


def written(folder: Path) -> tuple[dict, dict[str, list[dict]]]:
    (results_file,) = (folder / "lmms_eval").glob("*/*_results.json")
    samples = {
        f.name.split("_samples_")[1].removesuffix(".jsonl"): [
            json.loads(line) for line in f.read_text().splitlines()
        ]
        for f in results_file.parent.glob("*_samples_*.jsonl")
    }
    return json.loads(results_file.read_text()), samples


def reference_run(task_name: str, folder: Path) -> tuple[dict, dict]:
    """The reference's docs and replies, scored by this project's lmms_eval profile."""
    task = get_task(task_name)
    docs = PROVENANCE["docs"][task_name]
    inputs = [line["input"] for line in reference(f"samples_{task_name}.jsonl")]
    offset = 0 if task_name == "videomme" else 3  # the fake model counted videomme first
    raw = []
    for i, (doc, prompt) in enumerate(zip(docs, inputs, strict=True)):
        reply = PROVENANCE["replies_by_doc_id"][i]
        if task_name == "videomme":
            cats = {k: doc[k] for k in ("duration", "domain", "sub_category", "task_type")}
            sample_id, cluster, options = doc["question_id"], doc["videoID"], doc["options"]
        else:
            cats, sample_id, cluster = {}, str(doc["uid"]), doc["key"]
            options = [f"{letter}. {o}" for letter, o in zip("ABCD", doc["options"], strict=True)]
        question, target = doc["question"], doc["answer"]
        media = f"/v/{cluster}.mp4"
        sample = Sample(sample_id, media, question, prompt, "multiple_choice", target)
        sample = replace(sample, options=tuple(options), cluster=cluster, categories=cats)
        cost = {"prompt_tokens": 100 + offset + i, "completion_tokens": len(reply.split())}
        raw.append(
            {"doc_id": i, "sample_id": sample_id, "target": doc["answer"], "status": "ok"}
            | {"sample": sample_to_json(sample), "resps": [reply], "error": None}
            | {"cost": cost | UNUSED_COST}
        )
    spec = EvalSpec(task=task_name, data_dir="/data", model=MODEL, context={})
    records = score_records(task, raw, "lmms_eval")
    results = summarize(task, spec, records, "lmms_eval")
    write_lmms_eval_files(folder, task, spec, records, results, "lmms_eval")
    return results, written(folder)


PER_TASK = ("results", "group_subtasks", "versions", "n-shot", "higher_is_better", "n-samples")
PER_TASK += ("task_hashes",)


def one_task(document: dict, task_name: str) -> dict:
    """The document as if `task_name` were its only task (the reference holds two), with
    ``configs`` left out (compared on their own) and usage's task names set aside."""
    view = {k: v[task_name] if k in PER_TASK else v for k, v in document.items() if k != "configs"}
    usage = view["usage"]
    view["usage"] = {**usage, "by_task": {"*": next(iter(usage["by_task"].values()))}}
    efficiency = view["efficiency"]
    view["efficiency"] = {**efficiency, "by_task": {"*": efficiency["by_task"][task_name]}}
    return view


@pytest.mark.parametrize("task_name", ["videomme", "lvbench"])
def test_the_same_replies_give_the_files_lmms_eval_writes(task_name, tmp_path):
    _, (ours, samples) = reference_run(task_name, tmp_path)
    theirs = reference("results.json")
    assert list(ours) == list(theirs)
    for key in (*PER_TASK, "configs"):
        assert list(ours[key]) == [task_name], key
    mine, reference_view = one_task(ours, task_name), one_task(theirs, task_name)
    assert_same_shape(mine, reference_view)
    for key in ("results", "group_subtasks", "versions", "n-shot", "higher_is_better"):
        assert mine[key] == pytest.approx(reference_view[key]), key
    assert mine["n-samples"] == reference_view["n-samples"]
    assert mine["efficiency"]["by_task"] == reference_view["efficiency"]["by_task"]
    config, their_config = ours["configs"][task_name], theirs["configs"][task_name]
    kept = [key for key in their_config if key in config]
    assert list(config) == kept, "config keys are TaskConfig's, in its order"
    assert {"task", "metric_list", "output_type", "score_key", "metadata"} <= set(kept)
    assert config["metadata"][0] == their_config["metadata"][0] == {"version": 0.0}
    assert config["metric_list"][0]["metric"] == their_config["metric_list"][0]["metric"]

    lines, their_lines = samples[task_name], reference(f"samples_{task_name}.jsonl")
    for line, their in zip(lines, their_lines, strict=True):
        assert list(line) == list(their)
        for key in ("doc_id", "target", "resps", "filtered_resps", "token_counts", "input"):
            assert line.get(key) == their.get(key), key
        metric = next(iter(ours["higher_is_better"][task_name]))
        if isinstance(their[metric], dict):
            for key in ("score", "pred_answer", "answer", "videoID"):
                assert line[metric][key] == their[metric][key], key
        else:
            assert line[metric] is their[metric]
    assert ours["task_hashes"] == {task_name: task_hash(lines)}


def test_reference_hashes_every_doc_as_null_and_hashes_tasks_as_we_do():
    """lmms-eval@75571cf never sets Instance.doc, so its doc_hash is that of ``null``; its
    task hash is the rule the writer applies to real doc hashes."""
    theirs = reference("results.json")
    for task_name in ("videomme", "lvbench"):
        lines = reference(f"samples_{task_name}.jsonl")
        assert {line["doc_hash"] for line in lines} == {doc_hash(None)}
        assert theirs["task_hashes"][task_name] == task_hash(lines)


async def test_a_run_and_a_rescore_write_the_lmms_eval_layout(needle_dir, tmp_path):
    answers = oracle(needle_dir)
    wrong = set(list(answers)[:2])
    outcome = await evaluate(
        get_task("needle"), spec_for(needle_dir), llm=OracleModel(answers, wrong), out_root=tmp_path
    )
    ours, samples = written(outcome.folder)
    model_dir = outcome.folder / "lmms_eval" / sanitize_model_name("scripted")
    date = datetime.fromtimestamp(outcome.results["written_at"], timezone(timedelta(hours=8)))
    assert ours["date"] == date.strftime("%Y%m%d_%H%M%S")
    assert sorted(p.name for p in model_dir.iterdir()) == [
        f"{ours['date']}_results.json",
        f"{ours['date']}_samples_needle.jsonl",
    ]
    theirs = reference("results.json")
    assert list(ours) == list(theirs)
    by_metric = ("results", "higher_is_better")
    mine = {k: v for k, v in one_task(ours, "needle").items() if k not in by_metric}
    assert_same_shape(mine, {k: v for k, v in one_task(theirs, "videomme").items() if k in mine})
    names = list(ours["higher_is_better"]["needle"])
    assert names == list(outcome.results["metrics"])
    per_metric = [k.replace(VIDEOMME_METRIC, "{}") for k in theirs["results"]["videomme"]][1:]
    assert list(ours["results"]["needle"]) == ["alias"] + [
        p.format(m) for m in names for p in per_metric
    ]
    assert ours["config"]["model_args"] == "model_version=scripted"
    assert ours["config"]["resolved_cli_args"]["profile"] == "official"
    assert ours["n-samples"] == {"needle": {"original": 9, "effective": 9}}
    assert ours["versions"] == {"needle": "Yaml"}

    task_results = ours["results"]["needle"]
    metrics, per_item = outcome.results["metrics"], outcome.results["per_item"]
    assert task_results["mean_score,none"] == metrics["mean_score"] < 1
    assert task_results["mean_score_stderr,none"] == pytest.approx(per_item["score"]["se"])
    assert task_results["mc_accuracy,none"] == metrics["mc_accuracy"]
    assert task_results["mc_accuracy_stderr,none"] == "N/A"  # not a mean of every item
    assert task_results["mc_accuracy_stderr_clt,none"] == pytest.approx(per_item["score"]["se"])
    assert isinstance(task_results["mean_score_stderr_clustered,none"], float)

    lines = samples["needle"]
    records = {r["doc_id"]: r for r in map(json.loads, (outcome.folder / "samples.jsonl").open())}
    assert [line["doc_id"] for line in lines] == sorted(records)
    their_keys = list(reference("samples_videomme.jsonl")[0])
    at = their_keys.index(VIDEOMME_METRIC)
    for line in lines:
        record = records[line["doc_id"]]
        fixed = [k for k in their_keys[:at] if k in line]
        assert list(line) == fixed + names + their_keys[at + 1 :]
        dumped = json.dumps(record["sample"], indent=2, ensure_ascii=False)
        assert line["doc_hash"] == hashlib.sha256(dumped.encode()).hexdigest()
        assert line["mean_score"] == record["metrics"]["score"]
        assert line["mc_accuracy"]["score"] == record["metrics"]["score"]
        assert line["token_counts"][0]["input_tokens"] == record["cost"]["prompt_tokens"]
        assert "resps" not in line or line["resps"] == record["resps"][0]
        assert line["filtered_resps"] == record["filtered_resps"][0]
        assert line["input"] == record["sample"]["prompt"]
    assert ours["task_hashes"] == {"needle": task_hash(lines)}

    for old in model_dir.iterdir():
        old.unlink()
    assert (
        cmd_eval_rescore(argparse.Namespace(run_dir=outcome.folder, profile="official"), None) == 0
    )
    again, samples_again = written(outcome.folder)
    rescored = json.loads((outcome.folder / "results_official.json").read_text())
    assert again["results"] == ours["results"] and samples_again == samples
    date = datetime.fromtimestamp(rescored["written_at"], timezone(timedelta(hours=8)))
    assert again["date"] == date.strftime("%Y%m%d_%H%M%S")


@pytest.mark.parametrize(
    ("model", "folder"),
    [
        ("Qwen/Qwen3-VL-8B-Instruct", "Qwen__Qwen3-VL-8B-Instruct"),
        ("scripted", "scripted"),
        ("/ckpt/run/step:100", "run__step__100"),
    ],
)
def test_model_folders_are_named_as_the_tracker_names_them(model, folder):
    assert sanitize_model_name(model) == folder
