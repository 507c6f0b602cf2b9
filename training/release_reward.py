"""The ParaVT release's reward, bit for bit: ``compose_reward`` of EvolvingLMMs-Lab/ParaVT@cf55249
(``paravt/rl/rewards/``), with the settings its recipes set through ``apply_paravt_config``.

This is the ``release`` reward profile, for comparing with the release's published runs;
its defects are kept on purpose (reference/paravt-recipe.md lists them). The release scores
the decoded *generated* tokens of the main agent's turns, joined: no prefilled
``<think>\\n``, no tool responses, each turn ending with ``<|im_end|>`` when the decode
keeps it. :func:`release_text` builds that text from an episode's turns.
``tests/parity/test_parity_rewards.py`` proves agreement with the release's own code on the
reward corpus, on every reply where the release does not raise (it raises on an interval
such as "12.4, 20.0.", where float("20.0.") fails; here that gives accuracy 0).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

RELEASE_QUESTION_TYPES = {"multiple_choice": "mcq", "grounding": "tvg", "open_ended": "oe"}


@dataclass(frozen=True)
class ReleaseRecipe:
    """The environment a recipe's ``paravt:`` block sets (``paravt/rl/config.py``)."""

    answer_suffix: bool
    anchor_weight: float
    format_weight: float = 1.0
    mode: str = "f1"  # REWARD_MODE: f1 | exact ("llm" needs the release's judge)


PARAGRPO_8B = ReleaseRecipe(answer_suffix=True, anchor_weight=0.5)
VANILLA_GRPO_8B = ReleaseRecipe(answer_suffix=False, anchor_weight=0.0)
RECIPES = {"paragrpo_8b": PARAGRPO_8B, "vanilla_grpo_8b": VANILLA_GRPO_8B}

_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_CODE = re.compile(r"<tool_code>(.*?)(?:</tool_code>|$)", re.DOTALL)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_THINK_CLOSED = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_THINK_OPEN = re.compile(r"<think>(.*?)(?:<tool_|<answer>|<\|im_end\|>|$)", re.DOTALL)
_BLOCKS = tuple(
    re.compile(rf"<{tag}>.*?</{tag}>", re.DOTALL)
    for tag in ("tool_call", "tool_code", "tool_response")
)
_PAIRS = ("think", "tool_call", "tool_code", "answer")
_MCQ = tuple(
    re.compile(p)
    for p in (
        r"^\(?([A-D])\)?$",
        r"[Tt]he answer is\s*\(?([A-D])\)?",
        r"[Oo]ption\s*\(?([A-D])\)?",
        r"^([A-D])[.):]",
        r"\b([A-D])\b",
    )
)
_RANGE = re.compile(r"\[?\s*([\d.]+)\s*,\s*([\d.]+)\s*\]?")


def release_text(
    turns: Sequence[str],
    prefill: str | None,
    *,
    im_end: bool = True,
    stopped: Sequence[bool] | None = None,
) -> str:
    """What the release's reward reads of an episode: each turn's generated text (its
    prefill removed), all joined; with ``im_end``, a turn the model ended itself is followed
    by the ``<|im_end|>`` its decoded tokens keep, and a turn cut off at the token cap
    (``stopped`` False) by nothing, so that a call left open there still reads as JSON.

    >>> release_text(["a", "b"], None, stopped=[True, False])
    'a<|im_end|>b'
    """
    stopped = stopped if stopped is not None else [True] * len(turns)
    return "".join(
        (t.removeprefix(prefill) if prefill else t) + ("<|im_end|>" if im_end and ended else "")
        for t, ended in zip(turns, stopped, strict=True)
    )


def answer_text(text: str) -> str:
    """The release's ``extract_answer``: the first answer block; else what follows the first
    ``</think>`` without tool blocks and chat tokens; else the last non-empty line not
    starting with a chat token or a tool tag."""
    block = _ANSWER.search(text)
    if block:
        return block[1].strip()
    if "</think>" in text:
        tail = text.split("</think>", 1)[1]
        for pattern in _BLOCKS:
            tail = pattern.sub("", tail)
        tail = tail.replace("<|im_end|>", "").replace("<|im_start|>", "").strip()
        if tail:
            return tail
    lines = [line.strip() for line in text.splitlines()]
    lines = [
        ln for ln in lines if ln and not ln.startswith("<|im_") and not ln.startswith("<tool_")
    ]
    return lines[-1] if lines else ""


def normalize(text: str) -> str:
    """Lower case, articles out, every non-word character out (Unicode-aware), spaces joined."""
    text = re.sub(r"\b(a|an|the)\b", " ", text.strip().lower())
    return " ".join(re.sub(r"[^\w\s]", "", text).split())


def _f1(pred: str, gold: str) -> float:
    pred_tokens, gold_tokens = normalize(pred).split(), normalize(gold).split()
    if not pred_tokens or not gold_tokens:
        return 0.0
    shared = set(pred_tokens) & set(gold_tokens)  # each shared word once (a release defect)
    if not shared:
        return 0.0
    precision, recall = len(shared) / len(pred_tokens), len(shared) / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _range(text: str) -> tuple[float, float] | None:
    """The first "s, e" pair; raises ValueError where the release does ("20.0." is read)."""
    match = _RANGE.search(text)
    return (float(match[1]), float(match[2])) if match else None


def _iou(pred: str, gold: str) -> float:
    found = _range(pred), _range(gold)
    if found[0] is None or found[1] is None:
        return 0.0
    (ps, pe), (gs, ge) = found
    if pe <= ps or ge <= gs:
        return 0.0
    inter = max(0.0, min(pe, ge) - max(ps, gs))
    union = (pe - ps) + (ge - gs) - inter
    return inter / union if union > 0 else 0.0


def _mcq(pred: str, gold: str) -> float:
    gold = gold.strip().upper()
    if len(gold) != 1 or gold not in "ABCD":
        return 0.0
    pred = pred.strip()
    if pred.upper() == gold:
        return 1.0
    for pattern in _MCQ:
        match = pattern.search(pred)
        if match and match[1].upper() == gold:
            return 1.0
    return 0.0


def accuracy(answer: str, gold: str, question_type: str, recipe: ReleaseRecipe) -> float:
    if not answer or not gold:
        return 0.0
    if normalize(answer) == normalize(gold):
        return 1.0
    if question_type == "mcq":
        return _mcq(answer, gold)
    if question_type == "tvg":
        return _iou(answer, gold)
    if recipe.mode == "exact":
        return 0.0
    if recipe.mode != "f1":
        raise ValueError(f"release reward mode {recipe.mode!r} needs the release's LLM judge")
    return _f1(answer, gold)


def parseable_call(text: str) -> bool:
    """A tool call whose body is JSON with a "name", or a tool_code line with a "("."""
    for body in (b.strip() for b in _CALL.findall(text)):
        if body and not body.startswith("<|im_end|>"):
            try:
                data = json.loads(body)
            except ValueError:
                continue
            if isinstance(data, dict) and "name" in data:
                return True
    for body in (b.strip() for b in _CODE.findall(text)):
        if body and not body.startswith("<|im_end|>"):
            lines = (line.strip() for line in body.splitlines())
            if any(line and "(" in line and not line.startswith("#") for line in lines):
                return True
    return False


def format_score(text: str, recipe: ReleaseRecipe) -> float:
    """``compute_format_reward``, its additions in its order (floating point included)."""
    match = _THINK_CLOSED.search(text) or _THINK_OPEN.search(text)
    think = bool(match) and len(match[1].strip()) >= 10
    call = parseable_call(text)
    body = any(b.strip() for b in _ANSWER.findall(text))
    weights = (0.2, 0.3, 0.2) if recipe.answer_suffix else (0.3, 0.2, 0.1)
    score = 0.0
    if think:
        score += weights[0]
    if body:
        if "<answer>" in text:
            score += weights[1]
        if "</answer>" in text:
            score += weights[2]
    if recipe.anchor_weight > 0:
        bonus = 0.0
        if "</think>" in text and think:
            bonus += 0.4
        if "</think>" in text and think and body and "</answer>" in text:
            bonus += 0.3
        if "<think>" in text and "</think>" not in text:
            bonus -= 0.3
        score += recipe.anchor_weight * bonus
    opened, tools = text.find("<think>"), [text.find("<tool_call>"), text.find("<tool_code>")]
    tools = [position for position in tools if position != -1]
    if think and call and opened != -1 and tools and opened < min(tools):
        score += 0.3
    if score > 0 and all(text.count(f"<{k}>") == text.count(f"</{k}>") for k in _PAIRS):
        score += 0.1
    return min(score, 1.0)


def tool_score(text: str, acc: float) -> float:
    if not parseable_call(text):
        return 0.0
    reward = 0.3 if "<tool_response>" in text else 0.1
    if acc > 0:
        reward += 0.5
    return min(reward, 1.0)


def release_reward(
    text: str, gold: str, question_type: str, recipe: ReleaseRecipe = PARAGRPO_8B
) -> tuple[float, dict[str, float]]:
    """``compose_reward``: (acc + format_weight x format + tool, its parts). ``question_type``
    is the release's ("mcq", "tvg", anything else open-ended). Raises where the release does.

    >>> release_reward("The cup is red.\\n</think>\\n<answer>B</answer><|im_end|>", "B", "mcq")
    (1.5, {'acc_reward': 1.0, 'format_reward': 0.5, 'tool_reward': 0.0})
    """
    if text.count("<|im_start|>") >= 5 and len(text) < 300:
        return 0.0, {"acc_reward": 0.0, "format_reward": 0.0, "tool_reward": 0.0}
    acc = accuracy(answer_text(text), gold, question_type, recipe)
    fmt = format_score(text, recipe)
    tool = tool_score(text, acc)
    total = acc + recipe.format_weight * fmt + tool
    return total, {"acc_reward": acc, "format_reward": fmt, "tool_reward": tool}
