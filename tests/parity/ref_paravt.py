"""Run the ParaVT release (EvolvingLMMs-Lab/ParaVT@cf55249) on the corpus: its evaluation
driver's ``_score`` and summary (the ``paravt`` eval profile) and its RL ``compose_reward``
under each shipped recipe (the ``release`` reward profile)."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

from tests.parity.stubs import captured, load_file, package, stub_heavy, stub_module


def _paravt(root: Path):
    stub_heavy()
    sys.path.insert(0, str(root))
    package("paravt", root / "paravt")
    package("paravt.eval", root / "paravt/eval")
    package("paravt.rl", root / "paravt/rl")
    stub_module("qwen_vl_utils.vision_process", fetch_video=lambda *a, **k: None)


def driver(root: Path, corpus: dict) -> dict:
    """Per item ``driver._score`` on the final reply, and ``utils.run_dataset``'s summary over
    the results it builds with ``driver._make_result`` (processes and the OpenAI client
    replaced by in-process stand-ins; no model is called)."""
    _paravt(root)
    utils = load_file(root / "paravt/eval/utils.py", "paravt.eval.utils")
    module = load_file(root / "paravt/eval/driver.py", "paravt.eval.driver")
    out: dict = {"items": [], "aggregate": {}}
    for family in ("mc", "grounding"):
        samples, items = [], []
        for n, item in enumerate(corpus[family]):
            sample = {"id": item["id"], "question": "q", "video_path": "v.mp4"}
            if family == "mc":
                sample |= {"is_mcq": True, "answer": item["gold"]}
            else:
                start, end = item["gold"]
                sample |= {
                    "is_mcq": False,
                    "answer": f"{start}-{end}",
                    "gt_start": start,
                    "gt_end": end,
                    "key": f"k{n}",
                }
            correct, score, pred = module._score(sample, item["reply"])
            samples.append(sample)
            items.append(
                {
                    "id": item["id"],
                    "reply": item["reply"],
                    "doc": sample,
                    "out": {"correct": correct, "score": score, "pred": pred},
                }
            )
        replies = {i["id"]: i["reply"] for i in items}

        def eval_one(_client, _model, sample, _nframes, _turns, replies=replies):
            final = replies[sample["id"]]
            correct, score, pred = module._score(sample, final)
            return module._make_result(sample, final, pred, correct, score, tool_calls=0)

        utils.Process = _InlineProcess
        utils.OpenAI = lambda **kwargs: None
        with tempfile.TemporaryDirectory() as tmp, captured():
            summary = utils.run_dataset(
                eval_one,
                family,
                "m",
                samples,
                num_gpus=1,
                base_port=1,
                nframes=4,
                max_turns=1,
                workers=1,
                output_path=str(Path(tmp) / "out.json"),
            )
        summary.pop("elapsed", None)
        out["items"] += items
        out["aggregate"][family] = summary
    return out


class _InlineProcess:
    def __init__(self, target, args):
        self.target, self.args = target, args

    def start(self):
        self.target(*self.args)

    def join(self):
        pass


RECIPES = ("paragrpo_8b", "vanilla_grpo_8b")


def rewards(root: Path, corpus: dict, recipe: str) -> dict:
    """``compose_reward`` on every reward-corpus reply, with the env the recipe's
    ``apply_paravt_config`` sets. Run one recipe per process (the settings are env vars)."""
    _paravt(root)
    config = load_file(root / "paravt/rl/config.py", "paravt.rl.config")
    env = config.apply_paravt_config(root / f"paravt/rl/configs/{recipe}.yaml")
    package("paravt.rl.rewards", root / "paravt/rl/rewards")
    stub_module("openai", OpenAI=lambda **k: None)
    for name in ("utils", "task_metrics", "format", "tool", "llm_judge", "compose"):
        load_file(root / f"paravt/rl/rewards/{name}.py", f"paravt.rl.rewards.{name}")
    compose = sys.modules["paravt.rl.rewards.compose"].compose_reward
    items, raised = [], []
    for item in reward_corpus(corpus):
        try:
            total, parts = compose(
                prompt="",
                completions=item["completion"],
                prompt_ids=[],
                completion_ids=[],
                answer=item["answer"],
                question_type=item["question_type"],
            )
        except Exception as err:  # the release raises on some replies: recorded, not scored
            raised.append({"id": item["id"], "error": repr(err)})
            continue
        items.append(
            {
                "id": item["id"],
                "completion_sha1": sha1(item["completion"]),
                "out": {"total": total, **parts},
            }
        )
    return {
        "env": {k: v for k, v in env.items()},
        "items": items,
        "raised": raised,
        "env_seen": {k: os.environ.get(k) for k in env},
    }


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


QUESTION_TYPES = {"mc": "mcq", "grounding": "tvg", "open": "oe"}


def reward_corpus(corpus: dict) -> list[dict]:
    """Episodes as the release's reward sees them: the generated text of the main agent's
    turns, joined (each turn ends with the model's ``<|im_end|>``, which the decode keeps).

    Every corpus reply is a one-turn episode; every fifth also gets a first turn that called
    a tool. ``prefilled`` says whether the run prefilled ``<think>\\n`` before each turn
    (the reply then opens inside the think block)."""
    call = (
        "<think>\nThe overview misses it; look closer.\n</think>\n<tool_call>\n"
        '{"name": "crop_video", "arguments": {"start_time": 10, "end_time": 20}}\n</tool_call>'
    )
    items = []
    for family, entries in corpus.items():
        for n, entry in enumerate(entries):
            gold = entry["gold"]
            answer = f"[{gold[0]}, {gold[1]}]" if family == "grounding" else gold
            turns = [entry["reply"]] if n % 5 else [call, entry["reply"]]
            prefilled = "</think>" in entry["reply"] and "<think>" not in entry["reply"]
            if prefilled and len(turns) == 2:
                turns[0] = turns[0].removeprefix("<think>\n")
            completion = "".join(t + "<|im_end|>" for t in turns) if n % 2 else "".join(turns)
            items.append(
                {
                    "id": f"rw-{entry['id']}",
                    "turns": turns,
                    "prefilled": prefilled,
                    "im_end": bool(n % 2),
                    "completion": completion,
                    "answer": answer,
                    "question_type": QUESTION_TYPES[family],
                    "kind": family,
                }
            )
            if n % 9 == 0:  # the same episode, its last turn a call cut off at the token cap
                items.append(_cut_off(items[-1], call))
    return items


def _cut_off(episode: dict, call: str) -> dict:
    """The episode with a final turn that opens a call and is cut off after complete JSON:
    no ``</tool_call>``, and no ``<|im_end|>`` (the model never ended the turn)."""
    cut = call.removesuffix("\n</tool_call>")
    if episode["prefilled"]:
        cut = cut.removeprefix("<think>\n")
    turns = [*episode["turns"][:-1], cut]
    stopped = [True] * (len(turns) - 1) + [False]
    ends = ["<|im_end|>" if episode["im_end"] and s else "" for s in stopped]
    return {
        **episode,
        "id": episode["id"] + "-cut",
        "turns": turns,
        "stopped": stopped,
        "completion": "".join(t + e for t, e in zip(turns, ends, strict=True)),
    }
