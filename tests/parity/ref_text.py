"""Run the text-answer references on the corpus: SQuAD v1.1 (for VQAonline), SlideVQA's
``evaluate.py``, ChartQAPro's ``evaluate_predictions.py`` and MMVU's judge messages (the
official scorer and lmms-eval's rule-first task, with a scripted judge standing in)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
from pathlib import Path

from tests.parity.stubs import load_file, stub_heavy, stub_module

CHART_TYPES = ("Factoid", "Multi Choice", "Conversational", "Fact Checking", "Hypothetical")
MMVU_SUBJECTS = ("Biology", "Art", "Law", "Computer_Science", "Pharmacy", "Unknown_Subject")


def squad(root: Path, corpus: dict) -> dict:
    module = load_file(root / "metrics/squad/compute_score.py", "squad_score")
    items, qas, predictions = [], [], {}
    for item in corpus["open"]:
        gold, reply = item["gold"], item["reply"]
        out = {
            "exact_match": module.exact_match_score(reply, gold),
            "f1": module.f1_score(reply, gold),
        }
        items.append({"id": item["id"], "reply": reply, "doc": {"answer": gold}, "out": out})
        qas.append({"id": item["id"], "answers": [{"text": gold}]})
        predictions[item["id"]] = reply
    dataset = [{"paragraphs": [{"qas": qas}]}]
    return {"items": items, "aggregate": module.compute_score(dataset, predictions)}


def slidevqa(root: Path, corpus: dict) -> dict:
    module = load_file(root / "evaluate.py", "slidevqa_evaluate")
    items, gts, preds = [], {}, {}
    for item in corpus["open"]:
        gts[item["id"]] = {"question": item["question"], "answer": item["gold"]}
        preds[item["id"]] = {"answer": item["reply"]}
    result = module.evaluate_f1_em_qa(gts, preds)
    for item in corpus["open"]:
        key = item["id"]
        out = {
            "precision": result["precisions"][key],
            "recall": result["recalls"][key],
            "em": bool(result["EMs"][key]),
        }
        doc = {"question": item["question"], "answer": item["gold"]}
        items.append({"id": key, "reply": item["reply"], "doc": doc, "out": out})
    return {"items": items, "aggregate": {"F1": result["F1"], "EM": result["EM"]}}


def chartqapro(root: Path, corpus: dict) -> dict:
    stub_module("pandas")
    module = load_file(root / "evaluate_predictions.py", "chartqapro_evaluate")
    items, rows = [], []
    for n, item in enumerate(corpus["open"]):
        kind = CHART_TYPES[n % 5]
        year = ["YES" if n % 7 == 0 else "NO"] * (2 if kind == "Conversational" else 1)
        row = {
            "Question": [item["question"]],
            "Answer": [item["gold"]],
            "Question Type": kind,
            "Year": year,
            "prediction": item["reply"],
        }
        try:
            score = module.evaluate_predictions_chartqapro([row])["Overall"]
        except Exception as err:
            items.append(
                {"id": item["id"], "reply": item["reply"], "doc": row, "out": {"raised": repr(err)}}
            )
            continue
        rows.append(row)
        items.append(
            {"id": item["id"], "reply": item["reply"], "doc": row, "out": {"score": score}}
        )
    return {"items": items, "aggregate": module.evaluate_predictions_chartqapro(rows)}


def messages_sha1(messages: list[dict]) -> str:
    return hashlib.sha1(json.dumps(messages, ensure_ascii=False).encode()).hexdigest()


def scripted_verdict(response: str, answer: str) -> bool:
    """The stand-in judge both sides use: correct when the gold appears in the reply."""
    return answer.strip().lower() in response.lower()


def _mmvu_docs(corpus: dict) -> list[dict]:
    docs = []
    for n, item in enumerate(corpus["mc"][:200]):
        choices = {
            k: (f"choice {k} {n}" if "ABCDE".index(k) < item["n_options"] else "") for k in "ABCDE"
        }
        docs.append(
            {
                "id": item["id"],
                "reply": item["reply"],
                "doc": {
                    "id": str(n),
                    "question": f"Which one? {n}",
                    "question_type": "multiple-choice",
                    "choices": choices,
                    "answer": item["gold"],
                    "video_path": f"videos/{MMVU_SUBJECTS[n % 6]}/{n}.mp4",
                },
            }
        )
    for n, item in enumerate(corpus["open"]):
        docs.append(
            {
                "id": item["id"],
                "reply": item["reply"],
                "doc": {
                    "id": str(1000 + n),
                    "question": item["question"],
                    "question_type": "open-ended",
                    "choices": {k: "" for k in "ABCDE"},
                    "answer": item["gold"],
                    "video_path": f"videos/{MMVU_SUBJECTS[n % 6]}/{n}.mp4",
                },
            }
        )
    return docs


def mmvu_official(root: Path, corpus: dict) -> dict:
    """yale-nlp/MMVU ``utils/eval_utils.py``: the judge messages per item, and
    ``get_acc_async`` with its model call replaced by :func:`scripted_verdict`."""
    stub_heavy()
    stub_module("utils.api_utils")
    module = load_file(root / "utils/eval_utils.py", "mmvu_eval_utils")
    docs = _mmvu_docs(corpus)
    examples = [{**d["doc"], "response": d["reply"]} for d in docs]

    class Verdict:
        def __init__(self, example):
            self.extracted_answer = example["response"][:1]
            self.correct = scripted_verdict(example["response"], example["answer"])

    async def judge(
        client, messages, engine_name, max_tokens, requests_per_minute, structured_format
    ):
        return [Verdict(example) for example in examples]

    module.generate_from_openai_chat_completion_structured_format = judge
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:  # it writes cache/evaluation_messages.json
        os.chdir(tmp)
        try:
            accuracy, results = asyncio.run(module.get_acc_async(examples, client=None))
        finally:
            os.chdir(cwd)
    for n, (doc, result) in enumerate(zip(docs, results, strict=True)):
        message = module.prepare_evaluation_message(doc["doc"], doc["reply"])
        doc["out"] = {"messages_sha1": messages_sha1(message), "correct": result["correct"]}
        if n % 50 == 0:  # a few in full, to read; the hash pins every one
            doc["out"]["messages"] = message
    return {"items": docs, "aggregate": {"accuracy": accuracy}}


def mmvu_lmms_eval(h, corpus: dict) -> dict:
    """lmms-eval's MMVU task: rule-based first, then (open-ended only) the judge; the judge
    replaced by :func:`scripted_verdict`, with what the task asked it recorded."""
    module = h.task("mmvu")
    asked: list[dict] = []

    class Pipeline:  # lmms-eval 75571cf: a VerificationPipeline called with keywords
        def __call__(self, question, prediction, ground_truth):
            asked.append(
                {"question": question, "prediction": prediction, "ground_truth": ground_truth}
            )
            return type("R", (), {"is_correct": scripted_verdict(prediction, ground_truth)})

    class Server:  # lmms-eval 2c08ee5: an LLM-judge server with evaluate_binary
        def evaluate_binary(self, question, answer, prediction, output_format, custom_prompt):
            asked.append({"question": question, "prediction": prediction, "ground_truth": answer})
            return {"success": True, "result": "1" if scripted_verdict(prediction, answer) else "0"}

    module._get_pipeline = Pipeline
    module.get_llm_judge_server = Server
    docs, results = _mmvu_docs(corpus), []
    for doc in docs:
        filtered = h.filtered(doc["reply"])
        before = len(asked)
        data = module.mmvu_process_results(doc["doc"], [filtered])["accuracy"]
        results.append(data)
        doc["out"] = {
            "filtered": filtered,
            "correct": data["correct"],
            "method": data["eval_method"],
            "pred_answer": data["pred_answer"],
            "judge": asked[before] if len(asked) > before else None,
        }
    return {"items": docs, "aggregate": {"accuracy": module.mmvu_aggregate_results_val(results)}}
