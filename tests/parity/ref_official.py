"""Run the benchmarks' own official scoring code on the corpus: Video-MME (two copies of
``eval_your_results.py``), MLVU's ``choice_bench.py`` and LVBench's ``polish_answer`` +
``compute_accuracy``. Each function returns the parity document for one profile."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from tests.parity.stubs import captured, load_file, stub_heavy

DURATIONS = ("short", "medium", "long")


# --- Video-MME ---------------------------------------------------------------------------


def _videomme_items(corpus: dict, module) -> list[dict]:
    """Four-option corpus items as Video-MME questions, three per video."""
    items = []
    mc = [i for i in corpus["mc"] if i["n_options"] == 4]
    for n, item in enumerate(mc):
        video = n // 3
        items.append(
            {
                "id": item["id"],
                "reply": item["reply"],
                "doc": {
                    "question_id": f"{video:03d}-{n % 3 + 1}",
                    "videoID": f"vid{video:04d}",
                    "answer": item["gold"],
                    "duration": DURATIONS[video % 3],
                    "domain": module.CATEGORIES[video % len(module.CATEGORIES)],
                    "sub_category": module.SUB_CATEGORIES[(video * 7) % len(module.SUB_CATEGORIES)],
                    "task_type": module.TASK_CATEGORIES[n % len(module.TASK_CATEGORIES)],
                },
            }
        )
    return items


_SECTION = re.compile(r"^Evaluation on (?:video Type: (\w+)|the entire dataset)")
_GROUPS = {
    "Video Categories": "domain",
    "Video Domains": "domain",
    "Video Sub Categories": "sub_category",
    "Task Categories": "task_type",
    "Overall Performance": "overall",
}


def parse_report(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """The printed report as {section ("short" ... or "all"): {group: {name: "61.3"}}}."""
    report: dict[str, dict[str, dict[str, str]]] = {}
    section = group = None
    for line in text.splitlines():
        match = _SECTION.match(line)
        if match:
            section = match.group(1) or "all"
            report[section] = {}
        elif line in _GROUPS:
            group = _GROUPS[line]
            report[section].setdefault(group, {})
        elif line.endswith("%") and ": " in line and section and group:
            name, _, value = line.rpartition(": ")
            report[section][group][name] = value.strip().rstrip("%")
    return report


def videomme(ref: Path, corpus: dict, *, variant: str) -> dict:
    """``variant``: "brady" (BradyFU/Video-MME@4e7566d, the pinned reference: record fields
    duration_category / video_category / video_subcategory) or "readme" (the
    thanku-all/parse_answer copy the Video-MME README links: duration / domain / sub_category).
    """
    path = ref / (
        "evaluation/eval_your_results.py" if variant == "brady" else "eval_your_results.py"
    )
    module = load_file(path, f"videomme_{variant}")
    items = _videomme_items(corpus, module)
    keys = (
        ("duration_category", "video_category", "video_subcategory")
        if variant == "brady"
        else ("duration", "domain", "sub_category")
    )
    videos: dict[str, dict] = {}
    for item in items:
        doc = item["doc"]
        extracted = module.extract_characters_regex(item["reply"])
        item["out"] = {"extracted": extracted, "correct": extracted == doc["answer"]}
        video = videos.setdefault(
            doc["videoID"],
            {
                keys[0]: doc["duration"],
                keys[1]: doc["domain"],
                keys[2]: doc["sub_category"],
                "missing": False,
                "questions": [],
            },
        )
        video["questions"].append(
            {"task_type": doc["task_type"], "answer": doc["answer"], "response": item["reply"]}
        )
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.json"
        results.write_text(json.dumps(list(videos.values())), encoding="utf-8")
        with captured() as out:
            module.eval_your_results(
                str(results),
                video_types=list(DURATIONS),
                skip_missing=True,
                return_categories_accuracy=True,
                return_sub_categories_accuracy=True,
                return_task_types_accuracy=True,
            )
    return {"items": items, "aggregate": parse_report(out.getvalue())}


# --- MLVU --------------------------------------------------------------------------------

MLVU_TASKS = ("count", "ego", "needle", "order", "plotQA", "anomaly_reco", "topic_reasoning")
MLVU_FILES = {t: f"{n}_{t}.json" for n, t in zip((4, 3, 2, 5, 1, 6, 7), MLVU_TASKS, strict=True)}


def _mlvu_records(corpus: dict) -> list[dict]:
    """Corpus items as official MLVU records (answer = option text), with the official
    release's irregular shapes mixed in: an answer not among the candidates, a blank gold
    option, an all-blank record, and a repeated candidate."""
    items = []
    for n, item in enumerate(corpus["mc"]):
        count = item["n_options"]
        candidates = [f"option {n} {k}" for k in range(count)]
        gold = "ABCDE".index(item["gold"])
        answer = candidates[gold]
        if n % 53 == 0:
            answer = f"not listed {n}"
        elif n % 59 == 0:
            candidates[gold] = answer = ""
        elif n % 61 == 0:
            candidates = answer = None
        elif n % 67 == 0 and gold > 0:
            candidates[0] = answer
        if candidates is None:
            candidates, answer = ["", "", "", ""], ""
        record = {
            "video": f"{n}.mp4",
            "duration": 100.0,
            "question": f"q{n}",
            "candidates": candidates,
            "answer": answer,
        }
        items.append(
            {"id": item["id"], "reply": item["reply"], "task": MLVU_TASKS[n % 7], "record": record}
        )
    return items


def mlvu(ref: Path, corpus: dict) -> dict:
    """MLVU@fd060c1 ``choice_bench.py``: its ``qa_template`` and ``check_ans`` per item, and
    its ``main()`` run for real (model replies fed in where it would call the model)."""
    stub_heavy()
    module = load_file(ref / "evaluation/multiple_choice_evaluation/choice_bench.py", "mlvu_bench")
    items = _mlvu_records(corpus)
    replies = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for task in MLVU_TASKS:
            rows = [i["record"] for i in items if i["task"] == task]
            (folder / MLVU_FILES[task]).write_text(json.dumps(rows), encoding="utf-8")
        real_init = module.MLVU.__init__
        module.MLVU.__init__ = lambda self, _dir, data_list: real_init(self, str(folder), data_list)
        ordered = [i for t in MLVU_TASKS for i in items if i["task"] == t]

        def feed(dataset):  # stands in for tqdm: hands main() each reply as its `pred`
            for example, item in zip(dataset, ordered, strict=True):
                module.pred = item["reply"]
                replies.append(item["id"])
                yield example

        module.tqdm = feed
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            with captured():
                module.main()
            final = json.loads((folder / "bench_all.json").read_text())
        finally:
            os.chdir(cwd)
    dataset_like = module.MLVU.__new__(module.MLVU)
    for item in items:
        _, gt = dataset_like.qa_template(item["record"])
        item["out"] = {"gt": gt, "correct": module.check_ans(pred=item["reply"], gt=gt)}
    return {"items": items, "aggregate": final, "order": replies}


# --- LVBench -----------------------------------------------------------------------------

LVBENCH_TYPES = (
    "key information retrieval",
    "event understanding",
    "summarization",
    "entity recognition",
    "reasoning",
    "temporal grounding",
)


def lvbench(ref: Path, corpus: dict) -> dict:
    """LVBench@f998d95: ``polish_answer`` on each reply, then ``compute_accuracy`` over an
    answer file and a ``video_info.meta.jsonl`` written in the released format."""
    polish = load_file(ref / "lvbench/utils/answer_util.py", "lvbench_answer_util")
    metrics = load_file(ref / "lvbench/metrics/compute_accuracy.py", "lvbench_accuracy")
    items, lines, answers = [], [], {}
    for n, item in enumerate(i for i in corpus["mc"] if i["n_options"] == 4):
        types = [LVBENCH_TYPES[n % 6]] + ([LVBENCH_TYPES[(n + 2) % 6]] if n % 3 == 0 else [])
        uid = str(1000 + n)
        polished = polish.polish_answer(item["reply"])
        answers[uid] = polished
        doc = {"uid": uid, "answer": item["gold"], "question_type": types}
        items.append(
            {
                "id": item["id"],
                "reply": item["reply"],
                "doc": doc,
                "out": {"extracted": polished, "correct": polished == item["gold"]},
            }
        )
        if n % 4 == 0:
            lines.append({"key": f"yt{n}", "type": "sports", "video_info": {}, "qa": []})
        lines[-1]["qa"].append({**doc, "question": "q\n(A) a\n(B) b\n(C) c\n(D) d"})
    with tempfile.TemporaryDirectory() as tmp:
        answer_file, meta_file = Path(tmp) / "answers.json", Path(tmp) / "meta.jsonl"
        answer_file.write_text(json.dumps(answers), encoding="utf-8")
        meta_file.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
        accuracy = metrics.compute_accuracy(str(answer_file), str(meta_file))
    return {"items": items, "aggregate": dict(accuracy)}
