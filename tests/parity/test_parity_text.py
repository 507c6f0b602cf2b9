"""Grounding, open-ended and MMVU profiles agree with their reference harnesses on the
committed corpus (tests/data/parity, made by tests/parity/run_references.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.sample import Sample
from evals.scorers.mmvu import judge_messages
from evals.tasks import TASKS
from tests.parity.data import disagreements, reference
from tests.parity.ref_text import messages_sha1, scripted_verdict


def charades_sample(item: dict) -> Sample:
    doc = item["doc"]
    start, end = doc["timestamp"]
    return Sample(
        item["id"],
        "",
        doc["caption"],
        "p",
        "grounding",
        f"{start}-{end}",
        cluster=Path(doc["video"]).stem,
        extra={"start": start, "end": end},
    )


@pytest.mark.parametrize("profile", ["lmms_eval", "lmms_eval_2c08ee5"])
def test_charades_lmms_eval(profile):
    task = TASKS["charades"]
    doc = reference("charades_lmms_eval_" + ("75571cf" if profile == "lmms_eval" else "2c08ee5"))
    samples = [charades_sample(i) for i in doc["items"]]
    scored = [
        task.score(i["reply"], s, profile) for i, s in zip(doc["items"], samples, strict=True)
    ]
    raised = {r["id"] for r in doc.get("raised", [])}
    assert not disagreements(
        (
            i["id"],
            (s.filtered, s.extracted, s.metrics["iou"]),
            (i["out"]["filtered"], i["out"]["extracted"], i["out"].get("iou", 0.0)),
        )
        for i, s in zip(doc["items"], scored, strict=True)
    )
    assert {
        i["id"]
        for i, s in zip(doc["items"], scored, strict=True)
        if s.metrics.get("reference_raises")
    } == raised
    kept = [k for k, i in enumerate(doc["items"]) if i["id"] not in raised]
    ours = task.aggregate([samples[k] for k in kept], [scored[k].metrics for k in kept], profile)
    if profile == "lmms_eval":
        assert {k: ours[k] for k in doc["aggregate"]} == doc["aggregate"]
    else:  # eval_tvg.py prints its floats
        names = {"IOU 0.3": "IOU@3", "IOU 0.5": "IOU@5", "IOU 0.7": "IOU@7", "mIOU": "mIOU"}
        assert {k: str(ours[v]) for k, v in names.items()} == doc["aggregate"]
        assert doc["unique_keys"] < len(kept)  # repeated queries counted once


def test_paravt_driver_grounding():
    doc = reference("paravt_driver")
    items = [i for i in doc["items"] if not i["doc"]["is_mcq"]]
    task = TASKS["charades"]
    samples = [
        Sample(
            i["id"],
            "",
            "q",
            "p",
            "grounding",
            "x",
            extra={"start": i["doc"]["gt_start"], "end": i["doc"]["gt_end"]},
        )
        for i in items
    ]
    scored = [task.score(i["reply"], s, "paravt") for i, s in zip(items, samples, strict=True)]
    assert not disagreements(
        (i["id"], s.metrics["iou"], i["out"]["score"]) for i, s in zip(items, scored, strict=True)
    )
    ours = task.aggregate(samples, [s.metrics for s in scored], "paravt")
    summary = doc["aggregate"]["grounding"]
    assert {k: ours[k] for k in ("mIoU", "R@0.3", "R@0.5", "R@0.7")} == {
        k: summary[k] for k in ("mIoU", "R@0.3", "R@0.5", "R@0.7")
    }


def open_sample(item: dict, **extra) -> Sample:
    doc = item["doc"]
    return Sample(
        item["id"], "", doc.get("question", "q"), "p", "open_ended", doc["answer"], extra=extra
    )


def test_vqaonline_squad():
    task, doc = TASKS["vqaonline"], reference("squad")
    samples = [open_sample(i) for i in doc["items"]]
    scored = [
        task.score(i["reply"], s, "squad") for i, s in zip(doc["items"], samples, strict=True)
    ]
    assert not disagreements(
        (
            i["id"],
            (bool(s.metrics["exact_match"]), s.metrics["f1"]),
            (i["out"]["exact_match"], i["out"]["f1"]),
        )
        for i, s in zip(doc["items"], scored, strict=True)
    )
    assert task.aggregate(samples, [s.metrics for s in scored], "squad") == doc["aggregate"]


def test_slidevqa_official():
    task, doc = TASKS["slidevqa"], reference("slidevqa_official")
    samples = [open_sample(i) for i in doc["items"]]
    scored = [
        task.score(i["reply"], s, "official") for i, s in zip(doc["items"], samples, strict=True)
    ]
    assert not disagreements(
        (
            i["id"],
            (s.metrics["precision"], s.metrics["recall"], bool(s.metrics["em"])),
            (i["out"]["precision"], i["out"]["recall"], i["out"]["em"]),
        )
        for i, s in zip(doc["items"], scored, strict=True)
    )
    ours = task.aggregate(samples, [s.metrics for s in scored], "official")
    assert {k: ours[k] for k in ("F1", "EM")} == doc["aggregate"]


def test_chartqapro_official():
    task, doc = TASKS["chartqapro"], reference("chartqapro_official")
    items = [i for i in doc["items"] if "raised" not in i["out"]]
    samples = []
    for i in items:
        row = i["doc"]
        flags = row["Year"][-1:] if row["Question Type"] == "Conversational" else row["Year"]
        samples.append(
            Sample(
                i["id"],
                "",
                "q",
                "p",
                "open_ended",
                row["Answer"][-1].strip(".").strip("\n"),
                categories={"question_type": row["Question Type"]},
                extra={"year_flags": flags},
            )
        )
    scored = [task.score(i["reply"], s, "official") for i, s in zip(items, samples, strict=True)]
    assert not disagreements(
        (i["id"], s.metrics["relaxed_accuracy"], i["out"]["score"])
        for i, s in zip(items, scored, strict=True)
    )
    assert task.aggregate(samples, [s.metrics for s in scored], "official") == doc["aggregate"]


def mmvu_sample(item: dict) -> Sample:
    doc = item["doc"]
    mc = doc["question_type"] == "multiple-choice"
    options = tuple(f"{k}. {v}" for k, v in doc["choices"].items() if v) if mc else ()
    return Sample(
        doc["id"],
        "",
        doc["question"],
        "p",
        "multiple_choice" if mc else "open_ended",
        doc["answer"],
        options,
        cluster=doc["video_path"],
    )


@pytest.mark.parametrize("commit", ["75571cf", "2c08ee5"])
def test_mmvu_lmms_eval_rules_and_judge_inputs(commit):
    task, doc = TASKS["mmvu"], reference(f"mmvu_lmms_eval_{commit}")
    asked = []

    def judge(question, prediction, gold):
        asked.append({"question": question, "prediction": prediction, "ground_truth": gold})
        return scripted_verdict(prediction, gold)

    samples = [mmvu_sample(i) for i in doc["items"]]
    scored = []
    for item, sample in zip(doc["items"], samples, strict=True):
        before = len(asked)
        result = task.score(item["reply"], sample, "lmms_eval", judge=judge)
        scored.append((result, asked[before] if len(asked) > before else None))
    assert not disagreements(
        (
            i["id"],
            (s.filtered, s.extracted, int(s.metrics["correct"]), question),
            (i["out"]["filtered"], i["out"]["pred_answer"], i["out"]["correct"], i["out"]["judge"]),
        )
        for i, (s, question) in zip(doc["items"], scored, strict=True)
    )
    ours = task.aggregate(samples, [s.metrics for s, _ in scored], "lmms_eval")
    assert ours["accuracy"] == doc["aggregate"]["accuracy"]


def test_mmvu_official_judge_messages_and_accuracy():
    task, doc = TASKS["mmvu"], reference("mmvu_official")

    def judge(messages):  # the stand-in reads only what a real judge reads: the messages
        user = messages[1]["content"]
        gold = user.split("\n\nGround Truth Answer: ", 1)[1].split("\n\nModel Response")[0]
        reply = user.split("\n\nModel Response to the Question: ", 1)[1]
        return reply[:1], scripted_verdict(reply, gold)

    samples, rows = [], []
    for item in doc["items"]:
        sample = mmvu_sample(item)
        sample.extra.update(choices=item["doc"]["choices"], answer_as_written=item["doc"]["answer"])
        scored = task.score(item["reply"], sample, "official", official_judge=judge)
        messages = judge_messages(item["reply"], sample)
        samples.append((sample, scored))
        rows.append(
            (
                (messages_sha1(messages), bool(scored.metrics["correct"])),
                (item["out"]["messages_sha1"], item["out"]["correct"]),
            )
        )
        if "messages" in item["out"]:
            assert messages == item["out"]["messages"]
    assert not disagreements((i["id"], a, b) for i, (a, b) in zip(doc["items"], rows, strict=True))
    ours = task.aggregate([s for s, _ in samples], [r.metrics for _, r in samples], "official")
    assert ours["accuracy"] == doc["aggregate"]["accuracy"]
    with pytest.raises(ValueError, match="judge"):
        task.score("B", samples[0][0], "official")
