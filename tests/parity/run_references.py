"""Run every reference harness on the corpus and write its outputs as parity test data.

    python -m tests.parity.run_references --refs /path/to/checkouts [--only NAME ...]

``--refs`` holds one checkout per reference, named ``<repo>@<commit>`` (tests/parity/README.md
says how to make them). Each reference runs in its own process, so two commits of one
package never share a module table; each writes ``tests/data/parity/<name>.json``: the
pinned source, every item with the reply, the fields it was scored against and what the
reference returned, the reference's aggregates, and the items where it raised.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "parity"


@dataclass(frozen=True)
class Reference:
    folder: str  # <repo name>@<commit> under --refs
    repo: str
    files: tuple[str, ...]
    run: Callable[[Path, dict], dict]


def _lmms(run_name: str) -> Callable[[Path, dict], dict]:
    def run(root: Path, corpus: dict) -> dict:
        from tests.parity import ref_lmms_eval, ref_text

        harness = ref_lmms_eval.Harness(root)
        job = getattr(ref_lmms_eval, run_name, None) or getattr(ref_text, f"{run_name}_lmms_eval")
        return {"reasoning_tags": harness.tags_source, **job(harness, corpus)}

    return run


def _official(name: str, **kwargs) -> Callable[[Path, dict], dict]:
    def run(root: Path, corpus: dict) -> dict:
        from tests.parity import ref_official

        return getattr(ref_official, name)(root, corpus, **kwargs)

    return run


def _module(module: str, name: str, **kwargs) -> Callable[[Path, dict], dict]:
    def run(root: Path, corpus: dict) -> dict:
        import importlib

        return getattr(importlib.import_module(f"tests.parity.{module}"), name)(
            root, corpus, **kwargs
        )

    return run


LMMS_FILES = ("lmms_eval/api/reasoning.py", "lmms_eval/__main__.py (--reasoning_tags default)")
REFERENCES: dict[str, Reference] = {
    "videomme_official": Reference(
        "Video-MME@4e7566d",
        "BradyFU/Video-MME",
        ("evaluation/eval_your_results.py",),
        _official("videomme", variant="brady"),
    ),
    "videomme_official_readme": Reference(
        "parse_answer@afd52cf",
        "thanku-all/parse_answer",
        ("eval_your_results.py",),
        _official("videomme", variant="readme"),
    ),
    "mlvu_official": Reference(
        "MLVU@fd060c1",
        "JUNJIE99/MLVU",
        ("evaluation/multiple_choice_evaluation/choice_bench.py",),
        _official("mlvu"),
    ),
    "lvbench_official": Reference(
        "LVBench@f998d95",
        "THUDM/LVBench",
        ("lvbench/utils/answer_util.py", "lvbench/metrics/compute_accuracy.py"),
        _official("lvbench"),
    ),
    "paravt_driver": Reference(
        "ParaVT@cf55249",
        "EvolvingLMMs-Lab/ParaVT",
        ("paravt/eval/driver.py", "paravt/eval/utils.py"),
        _module("ref_paravt", "driver"),
    ),
    "squad": Reference(
        "evaluate@a7dd338",
        "huggingface/evaluate",
        ("metrics/squad/compute_score.py",),
        _module("ref_text", "squad"),
    ),
    "slidevqa_official": Reference(
        "SlideVQA@e1f0bd9",
        "nttmdlab-nlp/SlideVQA",
        ("evaluate.py",),
        _module("ref_text", "slidevqa"),
    ),
    "chartqapro_official": Reference(
        "ChartQAPro@4b422c6",
        "vis-nlp/ChartQAPro",
        ("evaluate_predictions.py", "anls==0.0.2"),
        _module("ref_text", "chartqapro"),
    ),
    "mmvu_official": Reference(
        "MMVU@4d54223",
        "yale-nlp/MMVU",
        ("utils/eval_utils.py",),
        _module("ref_text", "mmvu_official"),
    ),
}
for recipe in ("paragrpo_8b", "vanilla_grpo_8b"):
    REFERENCES[f"rewards_{recipe}"] = Reference(
        "ParaVT@cf55249",
        "EvolvingLMMs-Lab/ParaVT",
        ("paravt/rl/rewards/", "paravt/rl/config.py", f"paravt/rl/configs/{recipe}.yaml"),
        _module("ref_paravt", "rewards", recipe=recipe),
    )
for commit in ("2c08ee5", "75571cf"):
    tasks = {
        "videomme": "videomme",
        "mlvu": "mlvu",
        "lvbench": "lvbench",
        "longvideobench": "longvideobench",
        "mmvu": "mmvu",
    }
    tasks["charades"] = "charades_script" if commit == "2c08ee5" else "charades_task"
    for task, job in tasks.items():
        folder = task if task != "charades" else "charades_sta"
        files = (f"lmms_eval/tasks/{folder}/utils.py", *LMMS_FILES)
        if job == "charades_script":
            files = ("lmms_eval/tasks/charades_sta/eval_tvg.py",)
        if commit == "75571cf" and task in ("videomme", "mlvu", "lvbench"):
            files += ("lmms_eval/tasks/_task_utils/mcq_extract.py",)
        REFERENCES[f"{task}_lmms_eval_{commit}"] = Reference(
            f"lmms-eval@{commit}", "EvolvingLMMs-Lab/lmms-eval", files, _lmms(job)
        )


def run_one(name: str, refs: Path) -> None:
    ref = REFERENCES[name]
    corpus = json.loads((DATA / "corpus.json").read_text(encoding="utf-8"))
    result = ref.run(refs / ref.folder, corpus)
    replies = {i["id"]: i["reply"] for family in corpus.values() for i in family}
    for item in result.get("items", []):
        if "reply" in item and replies.get(item["id"]) == item["reply"]:
            del item["reply"]  # the corpus holds it (tests/parity/data.py puts it back)
    commit = ref.folder.split("@")[1]
    document = {
        "reference": {"repo": ref.repo, "commit": commit, "files": list(ref.files)},
        **result,
    }
    (DATA / f"{name}.json").write_text(dump(document), encoding="utf-8")


def dump(document: dict) -> str:
    """Compact JSON with one item per line, so a changed reference output is a readable diff."""
    lines = []
    for key, value in document.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            rows = ",\n".join(_json(row) for row in value)
            lines.append(f"{_json(key)}: [\n{rows}\n]")
        else:
            lines.append(f"{_json(key)}: {_json(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=Path, required=True, help="folder of <repo>@<commit>")
    parser.add_argument("--only", nargs="*", choices=sorted(REFERENCES), help="just these")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_one(args.one, args.refs)
        return
    failed = []
    for name in args.only or sorted(REFERENCES):
        cmd = [
            sys.executable,
            "-m",
            "tests.parity.run_references",
            "--refs",
            str(args.refs),
            "--one",
            name,
        ]
        done = subprocess.run(cmd, check=False)
        print(("ok  " if done.returncode == 0 else "FAIL") + f" {name}", flush=True)
        if done.returncode:
            failed.append(name)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
