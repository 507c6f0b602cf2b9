"""Run lmms-eval's own task code (one checkout, one commit) on the corpus, as its evaluator
does: the raw reply, then ``strip_reasoning_tags`` with the CLI's default ``--reasoning_tags``,
then the task's ``process_results``, then the metric's aggregation function."""

from __future__ import annotations

import ast
import json
import random
import re
import runpy
import sys
import tempfile
from pathlib import Path

from tests.parity.ref_official import DURATIONS, LVBENCH_TYPES, MLVU_TASKS
from tests.parity.stubs import captured, load_file, package, stub_heavy, stub_module

LVB_GROUPS = (15, 60, 600, 3600)
LVB_CATEGORIES = ("S2E", "S2O", "S2A", "E2O", "O2E", "T2E", "E3E", "SSS", "TOS")


class Harness:
    """One lmms-eval checkout: its reasoning stripper and task modules."""

    def __init__(self, root: Path):
        stub_heavy()
        stub_module("loguru", logger=_QuietLogger())
        self.root = root
        lmms = package("lmms_eval", root / "lmms_eval")
        package("lmms_eval.tasks", root / "lmms_eval/tasks")
        package("lmms_eval.tasks._task_utils", root / "lmms_eval/tasks/_task_utils")
        package("lmms_eval.api", root / "lmms_eval/api")
        stub_module("lmms_eval.utils")
        stub_module("lmms_eval.llm_judge")
        stub_module("lmms_eval.verifiers")
        stub_module("lmms_eval.verifiers.extractors")
        stub_module("lmms_eval.verifiers.openai")
        lmms.utils = sys.modules["lmms_eval.utils"]
        self.reasoning = load_file(root / "lmms_eval/api/reasoning.py", "lmms_eval.api.reasoning")
        main = (root / "lmms_eval/__main__.py").read_text(encoding="utf-8")
        default = re.search(r'"--reasoning_tags",\s*type=str,\s*default=(\'[^\n]*\'),', main)
        self.tags = self.reasoning.parse_reasoning_tags_config(
            cli_value=ast.literal_eval(default[1])
        )
        self.tags_source = default[1]

    def task(self, name: str):
        return load_file(self.root / f"lmms_eval/tasks/{name}/utils.py", f"lmms_{name}")

    def filtered(self, reply: str) -> str:
        return self.reasoning.strip_reasoning_tags(reply, self.tags)


class _QuietLogger:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _four(corpus: dict) -> list[dict]:
    return [i for i in corpus["mc"] if i["n_options"] == 4]


def videomme(h: Harness, corpus: dict) -> dict:
    module = h.task("videomme")
    items, results = [], []
    for n, item in enumerate(_four(corpus)):
        video = n // 3
        doc = {
            "question_id": f"{video:03d}-{n % 3 + 1}",
            "videoID": f"vid{video:04d}",
            "answer": item["gold"],
            "duration": DURATIONS[video % 3],
            "domain": module.CATEGORIES[video % len(module.CATEGORIES)],
            "sub_category": module.SUB_CATEGORIES[(video * 7) % len(module.SUB_CATEGORIES)],
            "task_type": module.TASK_CATEGORIES[n % len(module.TASK_CATEGORIES)],
        }
        filtered = h.filtered(item["reply"])
        data = module.videomme_process_results(doc, [filtered])["videomme_perception_score"]
        results.append(data)
        out = {"filtered": filtered, "extracted": data["pred_answer"], "score": data["score"]}
        items.append({"id": item["id"], "reply": item["reply"], "doc": doc, "out": out})
    return {
        "items": items,
        "aggregate": {"videomme_perception_score": module.videomme_aggregate_results(results)},
    }


def mlvu(h: Harness, corpus: dict) -> dict:
    module = h.task("mlvu")
    items, results = [], []
    for n, item in enumerate(_four(corpus)):
        doc = {"question": f"q{n}", "task_type": MLVU_TASKS[n % 7], "answer": item["gold"]}
        filtered = h.filtered(item["reply"])
        data = module.mlvu_process_results(doc, [filtered])["mlvu_percetion_score"]
        results.append(data)
        out = {
            "filtered": filtered,
            "extracted": data["pred_answer"],
            "correct": data["pred_answer"] == data["answer"],
        }
        items.append({"id": item["id"], "reply": item["reply"], "doc": doc, "out": out})
    return {
        "items": items,
        "aggregate": {"mlvu_percetion_score": module.mlvu_aggregate_results_dev(results)},
    }


def lvbench(h: Harness, corpus: dict) -> dict:
    module = h.task("lvbench")
    items, scores = [], []
    for n, item in enumerate(_four(corpus)):
        doc = {
            "uid": str(1000 + n),
            "answer": item["gold"],
            "question_type": [LVBENCH_TYPES[n % 6]],
        }
        filtered = h.filtered(item["reply"])
        score = module.lvbench_process_results(doc, [filtered])["lvbench_score"]
        scores.append(score)
        out = {
            "filtered": filtered,
            "extracted": module.extract_characters_regex(filtered),
            "score": bool(score),
        }
        items.append({"id": item["id"], "reply": item["reply"], "doc": doc, "out": out})
    # lvbench.yaml aggregates with lmms-eval's registered "mean": sum(arr) / len(arr)
    return {"items": items, "aggregate": {"lvbench_score": sum(scores) / len(scores)}}


def longvideobench(h: Harness, corpus: dict, seed: int = 0) -> dict:
    """Seeded as lmms-eval seeds Python's ``random`` (``--seed`` 0 by default) and scored in
    doc order, so the fallback's random letters are those of a fresh run."""
    module = h.task("longvideobench")
    items, results = [], []
    random.seed(seed)
    for n, item in enumerate(corpus["mc"]):
        count = item["n_options"]
        doc = {f"option{k}": (f"text {k}" if k < count else "N/A") for k in range(5)}
        doc |= {
            "id": f"lvb{n}",
            "correct_choice": "ABCDE".index(item["gold"]),
            "duration_group": LVB_GROUPS[n % 4],
            "question_category": LVB_CATEGORIES[n % 9],
        }
        filtered = h.filtered(item["reply"])
        data = module.longvideobench_process_results(doc, [filtered])["lvb_acc"]
        results.append(data)
        out = {
            "filtered": filtered,
            "extracted": data["parsed_pred"],
            "correct": data["parsed_pred"] == data["answer"],
        }
        items.append({"id": item["id"], "reply": item["reply"], "doc": doc, "out": out})
    return {
        "items": items,
        "seed": seed,
        "aggregate": {"lvb_acc": module.longvideobench_aggregate_results(results)},
    }


def _charades_docs(corpus: dict) -> list[dict]:
    docs = []
    for n, item in enumerate(corpus["grounding"]):
        video = f"V{n // 12:04d}"  # items n and n + 6 of a video share caption and gold:
        caption = f"person does thing {n % 6}"  # a repeated query, counted once by the task
        docs.append(
            {
                "id": item["id"],
                "reply": item["reply"],
                "doc": {"video": f"{video}.mp4", "caption": caption, "timestamp": item["gold"]},
            }
        )
    return docs


def charades_script(h: Harness, corpus: dict) -> dict:
    """``tasks/charades_sta/eval_tvg.py``, lmms-eval's scoring script for the submission file
    its Charades task writes (the reasoning-stripped replies): per item ``extract_time`` and
    ``iou`` with the script's fallback, and the script itself run on that file."""
    module = load_file(h.root / "lmms_eval/tasks/charades_sta/eval_tvg.py", "lmms_eval_tvg")
    items, submission, raised = _charades_docs(corpus), {}, []
    for item in items:
        doc = item["doc"]
        gt = doc["timestamp"]
        filtered = h.filtered(item["reply"])  # the reply the task writes to its submission
        times = module.extract_time(filtered)
        pred = times[0] if len(times) == 1 else [gt[1] + 10, gt[1] + 20]
        try:
            value = module.iou(gt, pred)
        except ZeroDivisionError as err:
            raised.append({"id": item["id"], "error": repr(err)})
            item["out"] = {"filtered": filtered, "extracted": times, "raised": repr(err)}
            continue
        item["out"] = {"filtered": filtered, "extracted": times, "iou": value}
        submission[f"{doc['video']}>>>{doc['caption']}>>>{doc['timestamp']}"] = filtered
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "submission.json"
        path.write_text(json.dumps(submission), encoding="utf-8")
        argv, sys.argv = sys.argv, ["eval_tvg.py", "-f", str(path)]
        try:
            with captured() as out:
                runpy.run_path(
                    str(h.root / "lmms_eval/tasks/charades_sta/eval_tvg.py"), run_name="__main__"
                )
        finally:
            sys.argv = argv
    printed = out.getvalue().splitlines()
    values = {}
    for line in printed:
        for key in ("IOU 0.3", "IOU 0.5", "IOU 0.7"):
            if line.startswith(key + ": "):
                values[key] = line.split(": ", 1)[1]
        if line.startswith("mIOU"):
            values["mIOU"] = line.split(" ", 1)[1]
    return {"items": items, "raised": raised, "aggregate": values, "unique_keys": len(submission)}


def charades_task(h: Harness, corpus: dict) -> dict:
    """``tasks/charades_sta/utils.py`` at a commit whose task computes the metrics itself."""
    module = h.task("charades_sta")
    items, results = _charades_docs(corpus), []
    for item in items:
        doc = item["doc"]
        filtered = h.filtered(item["reply"])
        results.append(
            module.temporal_grounding_process_results_generation(doc, [filtered])[
                "charades_sta_mIOU"
            ]
        )
        times = module.extract_time(filtered)
        gt = module._parse_ground_truth(str(doc["timestamp"]))
        value = module.iou(gt, times[0]) if len(times) == 1 else 0.0
        item["out"] = {"filtered": filtered, "extracted": times, "iou": value}
    aggregate = {
        name: getattr(module, f"temporal_grounding_aggregate_{name.lower().replace('@', '')}")(
            results, None
        )
        for name in ("IOU@3", "IOU@5", "IOU@7", "mIOU")
    }
    return {"items": items, "aggregate": aggregate}
