"""What the lmms-eval environment must hold (requirements/lmms-eval-overrides.txt), and how
its released scoring agrees with this project's lmms_eval profiles; prints one JSON object.
Run by that environment's python: .venv-lmms/bin/python tests/lmms_plugin/lmms_env_check.py

- the pitfalls measured with lmms-eval 0.7.3: no torchvision (PyPI's cannot load against the
  CPU torch, and transformers would import it at lmms-eval's start); filelock below 4 (4.x
  has no `filelock._api`, which lmms-eval imports when it evaluates);
- `paravt` resolves through this package's `lmms_eval.models` entry point;
- every multiple-choice reply of tests/data/parity/corpus.json scored by lmms-eval's own
  process_results (Video-MME, LVBench, MLVU; reasoning stripped with its default tags) and by
  this project's `lmms_eval` profile (pinned to lmms-eval 75571cf): items that agree.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lmms_eval.__main__ import parse_eval_args  # noqa: E402
from lmms_eval.api.reasoning import strip_reasoning_tags  # noqa: E402
from lmms_eval.models import get_model, get_model_manifest  # noqa: E402
from lmms_eval.tasks.lvbench import utils as lvbench_utils  # noqa: E402
from lmms_eval.tasks.mlvu import utils as mlvu_utils  # noqa: E402
from lmms_eval.tasks.videomme import utils as videomme_utils  # noqa: E402

from evals.sample import Sample  # noqa: E402
from evals.tasks import TASKS  # noqa: E402


def theirs(task: str, doc: dict, filtered: str) -> str:
    """The letter lmms-eval's own task code reads from the (stripped) reply."""
    if task == "videomme":
        return videomme_utils.videomme_process_results(doc, [filtered])[
            "videomme_perception_score"
        ]["pred_answer"]
    if task == "lvbench":
        return lvbench_utils.extract_characters_regex(filtered)
    return mlvu_utils.mlvu_process_results(doc, [filtered])["mlvu_percetion_score"]["pred_answer"]


def agreement() -> dict:
    replies = {
        r["id"]: r["reply"]
        for r in json.loads((ROOT / "tests/data/parity/corpus.json").read_text())["mc"]
    }
    tags = json.loads(parse_eval_args()[1].reasoning_tags)  # lmms-eval's CLI default
    out = {}
    for task in ("videomme", "lvbench", "mlvu"):
        items = json.loads((ROOT / f"tests/data/parity/{task}_lmms_eval_75571cf.json").read_text())[
            "items"
        ]
        same = []
        for item in items:
            reply, doc = replies[item["id"]], item["doc"]
            sample = Sample(
                item["id"],
                "",
                "q",
                "p",
                "multiple_choice",
                doc["answer"],
                tuple(f"{x}. o" for x in "ABCD"),
            )
            ours = TASKS[task].score(reply, sample, "lmms_eval")
            filtered = strip_reasoning_tags(reply, tags)
            same.append(filtered == ours.filtered and theirs(task, doc, filtered) == ours.extracted)
        out[task] = {"items": len(items), "agree": sum(same)}
    return out


if __name__ == "__main__":
    argv, sys.argv = sys.argv, sys.argv[:1]  # parse_eval_args reads the command line
    manifest = get_model_manifest("paravt")
    print(
        json.dumps(
            {
                "lmms_eval": importlib.metadata.version("lmms_eval"),
                "torchvision": importlib.util.find_spec("torchvision") is not None,
                "filelock": importlib.metadata.version("filelock"),
                "filelock_api": importlib.util.find_spec("filelock._api") is not None,
                "transformers": importlib.metadata.version("transformers"),
                "paravt": [
                    manifest.chat_class_path,
                    manifest.simple_class_path,
                    get_model("paravt").__name__,
                    get_model("paravt", True).__name__,
                ],
                "agreement": agreement(),
            }
        )
    )
