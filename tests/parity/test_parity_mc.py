"""Multiple-choice profiles agree with their reference harnesses item for item, extraction for
extraction and aggregate for aggregate, on the committed corpus of messy replies
(tests/data/parity: the references' own outputs, made by tests/parity/run_references.py)."""

from __future__ import annotations

import math

import pytest

from evals.sample import Sample
from evals.tasks import TASKS
from tests.parity.data import disagreements, reference
from tests.support.reference_samples import videomme_sample


@pytest.mark.parametrize(
    ("profile", "ref"),
    [("official", "videomme_official"), ("official_readme", "videomme_official_readme")],
)
def test_videomme_official_scripts(profile, ref):
    task, doc = TASKS["videomme"], reference(ref)
    samples = [videomme_sample(i["doc"]) for i in doc["items"]]
    scored = [
        task.score(i["reply"], s, profile) for i, s in zip(doc["items"], samples, strict=True)
    ]
    assert not disagreements(
        (
            i["id"],
            (s.extracted, bool(s.metrics["correct"])),
            (i["out"]["extracted"], i["out"]["correct"]),
        )
        for i, s in zip(doc["items"], scored, strict=True)
    )
    metrics = [s.metrics for s in scored]
    report = doc["aggregate"]

    def printed(rows):
        value = task.aggregate([samples[k] for k in rows], [metrics[k] for k in rows], profile)
        return f"{value['overall']:.1f}"

    assert report["all"]["overall"]["Overall"] == printed(range(len(samples)))
    checked = 0
    for section, groups in report.items():
        for group, values in groups.items():
            for name, value in values.items():
                rows = [
                    k
                    for k, s in enumerate(samples)
                    if section in ("all", s.categories["duration"])
                    and (group == "overall" or s.categories[group] == name)
                ]
                assert printed(rows) == value, (section, group, name)
                checked += 1
    assert checked > 150


LMMS = ("lmms_eval", "75571cf"), ("lmms_eval_2c08ee5", "2c08ee5")


@pytest.mark.parametrize(("profile", "commit"), LMMS)
def test_videomme_lmms_eval(profile, commit):
    task, doc = TASKS["videomme"], reference(f"videomme_lmms_eval_{commit}")
    samples = [videomme_sample(i["doc"]) for i in doc["items"]]
    scored = [
        task.score(i["reply"], s, profile) for i, s in zip(doc["items"], samples, strict=True)
    ]
    assert not disagreements(
        (
            i["id"],
            (s.filtered, s.extracted, s.metrics["score"]),
            (i["out"]["filtered"], i["out"]["extracted"], i["out"]["score"]),
        )
        for i, s in zip(doc["items"], scored, strict=True)
    )
    ours = task.aggregate(samples, [s.metrics for s in scored], profile)
    assert ours["videomme_perception_score"] == doc["aggregate"]["videomme_perception_score"]


def mlvu_sample(item: dict, *, official: bool) -> Sample:
    if official:
        task, record = item["task"], item["record"]
        gold = item["out"]["gt"][1]  # "(X) text": the letter the reference compares with
        options = tuple(f"{'ABCDE'[k]}. {c}" for k, c in enumerate(record["candidates"]))
    else:
        task, gold = item["doc"]["task_type"], item["doc"]["answer"]
        options = tuple(f"{x}. o" for x in "ABCD")
    return Sample(
        item["id"], "", "q", "p", "multiple_choice", gold, options, categories={"task": task}
    )


def test_mlvu_official_choice_bench():
    task, doc = TASKS["mlvu"], reference("mlvu_official")
    samples = [mlvu_sample(i, official=True) for i in doc["items"]]
    scored = [
        task.score(i["reply"], s, "official") for i, s in zip(doc["items"], samples, strict=True)
    ]
    assert not disagreements(
        (i["id"], bool(s.metrics["correct"]), i["out"]["correct"])
        for i, s in zip(doc["items"], scored, strict=True)
    )
    ours = task.aggregate(samples, [s.metrics for s in scored], "official")
    assert ours == doc["aggregate"]


@pytest.mark.parametrize(("profile", "commit"), LMMS)
def test_mlvu_lmms_eval(profile, commit):
    task, doc = TASKS["mlvu"], reference(f"mlvu_lmms_eval_{commit}")
    samples = [mlvu_sample(i, official=False) for i in doc["items"]]
    scored = [
        task.score(i["reply"], s, profile) for i, s in zip(doc["items"], samples, strict=True)
    ]
    assert not disagreements(
        (
            i["id"],
            (s.filtered, s.extracted, bool(s.metrics["correct"])),
            (i["out"]["filtered"], i["out"]["extracted"], i["out"]["correct"]),
        )
        for i, s in zip(doc["items"], scored, strict=True)
    )
    ours = task.aggregate(samples, [s.metrics for s in scored], profile)["mlvu_percetion_score"]
    # lmms-eval sums its 7 task accuracies in a set's (hash-seeded) order: the last bits vary
    assert math.isclose(ours, doc["aggregate"]["mlvu_percetion_score"], rel_tol=1e-12)


def lvbench_sample(doc: dict) -> Sample:
    return Sample(
        doc["uid"],
        "",
        "q",
        "p",
        "multiple_choice",
        doc["answer"],
        tuple(f"{x}. o" for x in "ABCD"),
        categories={"question_type": doc["question_type"]},
    )


@pytest.mark.parametrize(
    ("profile", "ref", "key"),
    [
        ("official", "lvbench_official", None),
        ("lmms_eval", "lvbench_lmms_eval_75571cf", "lvbench_score"),
        ("lmms_eval_2c08ee5", "lvbench_lmms_eval_2c08ee5", "lvbench_score"),
    ],
)
def test_lvbench(profile, ref, key):
    task, doc = TASKS["lvbench"], reference(ref)
    samples = [lvbench_sample(i["doc"]) for i in doc["items"]]
    scored = [
        task.score(i["reply"], s, profile) for i, s in zip(doc["items"], samples, strict=True)
    ]
    theirs_correct = "correct" if profile == "official" else "score"
    assert not disagreements(
        (
            i["id"],
            (s.extracted, bool(s.metrics["correct"])),
            (i["out"]["extracted"], i["out"][theirs_correct]),
        )
        for i, s in zip(doc["items"], scored, strict=True)
    )
    ours = task.aggregate(samples, [s.metrics for s in scored], profile)
    assert ours == doc["aggregate"] if key is None else ours[key] == doc["aggregate"][key]


def lvb_sample(doc: dict) -> Sample:
    options = tuple(
        f"{'ABCDE'[k]}. {doc[f'option{k}']}" for k in range(5) if doc[f"option{k}"] != "N/A"
    )
    categories = {
        "duration_group": str(doc["duration_group"]),
        "question_category": doc["question_category"],
    }
    return Sample(
        doc["id"],
        "",
        "q",
        "p",
        "multiple_choice",
        "ABCDE"[doc["correct_choice"]],
        options,
        categories=categories,
    )


@pytest.mark.parametrize("commit", ["75571cf", "2c08ee5"])
def test_longvideobench_lmms_eval_with_its_seeded_guess(commit):
    task, doc = TASKS["longvideobench"], reference(f"longvideobench_lmms_eval_{commit}")
    assert doc["seed"] == 0
    samples = [lvb_sample(i["doc"]) for i in doc["items"]]
    scored = task.score_in_order([i["reply"] for i in doc["items"]], samples, "lmms_eval")
    assert not disagreements(
        (i["id"], (s.filtered, s.extracted), (i["out"]["filtered"], i["out"]["extracted"]))
        for i, s in zip(doc["items"], scored, strict=True)
    )
    ours = task.aggregate(samples, [s.metrics for s in scored], "lmms_eval")
    assert ours["lvb_acc"] == doc["aggregate"]["lvb_acc"]
    assert ours["random_guesses"] > 0  # the corpus exercises the fallback


def test_paravt_driver_multiple_choice():
    doc = reference("paravt_driver")
    items = [i for i in doc["items"] if i["doc"]["is_mcq"]]
    task = TASKS["videomme"]
    samples = [Sample(i["id"], "", "q", "p", "multiple_choice", i["doc"]["answer"]) for i in items]
    scored = [task.score(i["reply"], s, "paravt") for i, s in zip(items, samples, strict=True)]
    assert not disagreements(
        (
            i["id"],
            (s.extracted, bool(s.metrics["correct"])),
            (i["out"]["pred"], i["out"]["correct"]),
        )
        for i, s in zip(items, scored, strict=True)
    )
    ours = task.aggregate(samples, [s.metrics for s in scored], "paravt")
    summary = doc["aggregate"]["mc"]
    assert (ours["accuracy"], ours["mcq_total"]) == (summary["accuracy"], summary["mcq_total"])
