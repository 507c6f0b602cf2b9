"""PARA-GRPO rewards: R = R_acc + lambda_fmt * R_fmt + R_tool, per episode, TRL-style.

Cores score the main agent's turns of one episode (a str is a one-turn episode), each turn
*including* its prefilled Think Prefix; ``*_rewards(completions, **kwargs)`` rebuild those
turns from generated text and return one float per completion, or None ("cannot judge").
``RewardSettings.profile`` picks the rules from :data:`FORMAT_RULES`, :data:`TOOL_RULES`,
:data:`CORRECT_RULES`:

- ``"paper"`` (default). Format: +0.2 substantive think (>= 10 chars) in every turn; +0.3
  ``<answer>`` / +0.2 ``</answer>`` for one non-empty answer in the last turn; +0.3 think
  then a valid call with arguments; +0.1 (if anything else scored) every turn's tags paired
  and in order; lambda_anchor x (+0.4 every think closed and substantive, +0.3 closed think
  -> answer, -0.3 a think never closed); clamped to [0, 1]. The Answer Suffix setting picks
  :data:`TAG_WEIGHTS`; with it off the think/answer weights are 0.3/0.2/0.1, as released.
  Tag order is checked: the violations in ``_ORDER`` void the answer, call, flow and
  pairing terms, so ``<answer>A</answer>`` x 30 scores 0.4. Tool: from the rollout's
  record, 0.1 a call ran, 0.3 a result came back, +0.5 (with a result) when the answer is
  *correct*: accuracy >= ``threshold`` (0.5), not any partial F1 or IoU above 0.
- ``"release"``: the public release, defects included. It sees only generated text (prefill
  stripped, turns joined, tool responses unseen): a perfect turn gets format 0.5, dropping
  ``</think>`` gets 0.6, the anchor never fires, format goes negative (-0.15) on a generated
  ``<think>`` left open, tool level 0.3 is unreachable, the bonus fires on accuracy > 0.
  Accuracy always uses :mod:`agents.scoring` (the release's scorer bugs are not copied).

Degenerate output (>= 5 ``<|im_start|>`` and < 300 chars) scores 0 in every reward part;
:func:`accuracy_reward`, shared with evaluation, does not apply that rule itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from agents.protocol import THINK_PREFIX, Violation, parse, with_prefix
from agents.scoring.accuracy import OPEN_METRICS, accuracy_reward

Profile = Literal["paper", "release"]
Turns = str | Sequence[str]
MIN_THINK_CHARS = 10
TAG_WEIGHTS = {True: (0.2, 0.3, 0.2), False: (0.3, 0.2, 0.1)}
"""Answer Suffix on/off -> (think, <answer>, </answer>) weights, as the release re-weights."""
_ORDER = {
    Violation.MISORDERED_TAGS,
    Violation.MULTIPLE_ANSWERS,
    Violation.ANSWER_WITH_TOOL_CALLS,
    Violation.TOOL_RESPONSE_IN_TURN,
}
_UNPAIRED = _ORDER | {Violation.MISSING_THINK, Violation.UNCLOSED_THINK}
_UNPAIRED |= {Violation.UNCLOSED_TOOL_CALL, Violation.UNCLOSED_ANSWER}


@dataclass(frozen=True)
class RewardSettings:
    """How one run rewards; picklable, bound once (``training.para_grpo`` builds it)."""

    profile: Profile = "paper"
    prefill: str | None = THINK_PREFIX  # prefilled on every main-agent turn (None: nothing)
    answer_suffix: bool = True  # answer-heavy format weights (TAG_WEIGHTS)
    lambda_fmt: float = 1.0
    lambda_anchor: float = 0.5
    threshold: float = 0.5  # accuracy that counts as a correct answer for the tool bonus
    letter_profile: str = "robust"  # agents.scoring.letters profile
    open_metric: str = "f1"  # key of OPEN_METRICS

    def __post_init__(self) -> None:
        if self.profile not in get_args(Profile) or self.open_metric not in OPEN_METRICS:
            raise ValueError(f"unknown profile or open_metric in {self}")


PAPER = RewardSettings()
RELEASE = RewardSettings(profile="release")


def is_degenerate(text: str) -> bool:
    """The release's short-circuit shape: >= 5 ``<|im_start|>`` in under 300 characters."""
    return text.count("<|im_start|>") >= 5 and len(text) < 300


def _turns(turns: Turns) -> list[str]:
    return [turns] if isinstance(turns, str) else list(turns) or [""]


@dataclass(frozen=True)
class _Facts:
    think: bool  # substantive think body (closed or not, as the release)
    closed: bool
    unclosed: bool  # <think> opened and never closed
    paired: bool
    call: bool  # a valid call with arguments after the think, tags in order
    answer: bool  # one non-empty answer, tags in order
    answer_closed: bool

    @classmethod
    def of(cls, turn: str) -> _Facts:
        t = parse(turn)
        found = set(t.violations)
        ordered = not found & _ORDER
        return cls(
            think=len(t.think or "") >= MIN_THINK_CHARS,
            closed=t.think_closed,
            unclosed=t.think is not None and not t.think_closed,
            paired=not found & _UNPAIRED,
            call=ordered and any(call.valid and call.arguments for call in t.tool_calls),
            answer=ordered and bool(t.answer),
            answer_closed=Violation.UNCLOSED_ANSWER not in found,
        )


def anchor_reward(turns: Turns) -> float:
    """Unscaled anchor terms in [-0.3, 0.7] (paper profile): +0.4 every think closed, +0.3
    closed think -> answer in the last turn, -0.3 when a think is never closed.

    >>> anchor_reward("<think>\\nThe cup is red.\\n</think>\\n<answer>B</answer>")
    0.7
    >>> anchor_reward("<think>\\nThe cup is red.\\n<answer>B</answer>")
    -0.3
    """
    return _anchor([_Facts.of(t) for t in _turns(turns)])


def _anchor(facts: list[_Facts]) -> float:
    closed = all(f.closed and f.think for f in facts)
    flow = closed and facts[-1].answer and facts[-1].answer_closed
    return round(0.4 * closed + 0.3 * flow - 0.3 * any(f.unclosed for f in facts), 6)


def _paper_format(turns: list[str], s: RewardSettings) -> float:
    facts = [_Facts.of(t) for t in turns]
    last, (w_think, w_open, w_close) = facts[-1], TAG_WEIGHTS[s.answer_suffix]
    score = w_think * all(f.think for f in facts) + 0.3 * any(f.think and f.call for f in facts)
    if last.answer:
        score += w_open + w_close * last.answer_closed
    if score > 0 and all(f.paired for f in facts):
        score += 0.1
    score += s.lambda_anchor * _anchor(facts)
    return round(min(1.0, max(0.0, score)), 6)


_R_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_R_CODE = re.compile(r"<tool_code>(.*?)(?:</tool_code>|$)", re.DOTALL)
_R_THINK = re.compile(r"<think>(.*?)</think>|<think>(.*?)(?:<tool_|<answer>|<\|im_end\|>|$)", re.S)
_R_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_R_PAIRS = ("think", "tool_call", "tool_code", "answer")


def _generated(turns: list[str], prefill: str | None) -> str:
    """What the release's reward saw: each turn without its prefill, concatenated."""
    return "".join(t.removeprefix(prefill) if prefill else t for t in turns)


def _release_call(text: str) -> bool:
    """The release's "parseable call": a JSON object with a "name", or a tool_code line."""
    for body in (b.strip() for b in _R_CALL.findall(text)):
        try:
            if body and not body.startswith("<|im_end|>"):
                data = json.loads(body)
                if isinstance(data, dict) and "name" in data:
                    return True
        except (ValueError, TypeError, RecursionError):
            pass
    bodies = [b.strip() for b in _R_CODE.findall(text) if not b.strip().startswith("<|im_end|>")]
    lines = (line.strip() for body in bodies for line in body.splitlines())
    return any("(" in line and not line.startswith("#") for line in lines)


def _release_format(turns: list[str], s: RewardSettings) -> float:
    text = _generated(turns, s.prefill)
    match = _R_THINK.search(text)
    think = bool(match) and len((match[1] or match[2] or "").strip()) >= MIN_THINK_CHARS
    body = any(b.strip() for b in _R_ANSWER.findall(text))
    w_think, w_open, w_close = TAG_WEIGHTS[s.answer_suffix]
    score = w_think * think + body * (
        w_open * ("<answer>" in text) + w_close * ("</answer>" in text)
    )
    if s.lambda_anchor > 0:
        closed = "</think>" in text and think
        anchor = 0.4 * closed + 0.3 * (closed and body and "</answer>" in text)
        score += s.lambda_anchor * (anchor - 0.3 * ("<think>" in text and "</think>" not in text))
    calls = [i for i in (text.find("<tool_call>"), text.find("<tool_code>")) if i >= 0]
    if think and _release_call(text) and -1 < text.find("<think>") < min(calls, default=-1):
        score += 0.3
    if score > 0 and all(text.count(f"<{k}>") == text.count(f"</{k}>") for k in _R_PAIRS):
        score += 0.1
    return round(min(score, 1.0), 6)


FORMAT_RULES = {"paper": _paper_format, "release": _release_format}
VIEWS: dict[str, Callable[[list[str], str | None], str]] = {
    "paper": lambda turns, _prefill: "".join(turns),
    "release": _generated,
}
"""The text each profile reads as a whole (the degenerate rule is applied to it)."""


def _degenerate(episode: list[str], s: RewardSettings) -> bool:
    return is_degenerate(VIEWS[s.profile](episode, s.prefill))


def format_reward(turns: Turns, settings: RewardSettings = PAPER) -> float:
    """R_fmt of an episode's main-agent turns, each including its prefill.

    >>> perfect = "<think>\\nThe cup is red.\\n</think>\\n<answer>B</answer>"
    >>> dropped = "<think>\\nThe cup is red.\\n<answer>B</answer>"
    >>> format_reward(perfect), format_reward(dropped)
    (1.0, 0.55)
    >>> format_reward(perfect, RELEASE), format_reward(dropped, RELEASE)
    (0.5, 0.6)
    >>> format_reward("<think>\\n<think>\\nhmm", RELEASE)  # the release goes negative
    -0.15
    """
    episode = _turns(turns)
    if _degenerate(episode, settings):
        return 0.0
    return FORMAT_RULES[settings.profile](episode, settings)


def _paper_tool(turns: list[str], executed, responses, correct: bool, _) -> float | None:
    if executed is None or responses is None:
        return None  # no rollout record: cannot judge (and never a text search)
    if executed <= 0:
        return 0.0
    came_back = responses > 0
    return (0.3 if came_back else 0.1) + (0.5 if came_back and correct else 0.0)


def _release_tool(turns: list[str], _executed, _responses, correct: bool, prefill) -> float:
    text = _generated(turns, prefill)
    if not _release_call(text):
        return 0.0
    return min(1.0, (0.3 if "<tool_response>" in text else 0.1) + 0.5 * correct)


TOOL_RULES = {"paper": _paper_tool, "release": _release_tool}
CORRECT_RULES: dict[str, Callable[[float, float], bool]] = {
    "paper": lambda accuracy, threshold: accuracy >= threshold,
    "release": lambda accuracy, _threshold: accuracy > 0,
}


def tool_reward(
    turns: Turns,
    *,
    executed_calls: int | None,
    tool_responses: int | None,
    correct: bool,
    settings: RewardSettings = PAPER,
) -> float | None:
    """R_tool. Paper: from the rollout's record (calls that passed validation and ran, results
    that came back; None without a record); the text is not searched. Release: only the text.

    >>> call = '<think>\\nCheck 10-20 s.\\n</think>\\n<tool_call>{"name": "crop_video", ' \\
    ...        '"arguments": {"start_time": 10, "end_time": 20}}</tool_call>'
    >>> tool_reward(call, executed_calls=1, tool_responses=1, correct=True)
    0.8
    >>> tool_reward(call, executed_calls=1, tool_responses=1, correct=True, settings=RELEASE)
    0.6
    """
    episode = _turns(turns)
    if _degenerate(episode, settings):
        return 0.0
    rule = TOOL_RULES[settings.profile]
    return rule(episode, executed_calls, tool_responses, correct, settings.prefill)


@dataclass(frozen=True)
class RewardParts:
    """One episode's reward and its parts; None where it cannot be judged."""

    accuracy: float | None
    format: float
    tool: float | None
    total: float | None
    degenerate: bool = False


def total_reward(
    turns: Turns,
    *,
    kind: str,
    target: Any,
    executed_calls: int | None = None,
    tool_responses: int | None = None,
    letters: str = "ABCD",
    settings: RewardSettings = PAPER,
) -> RewardParts:
    """R = R_acc + lambda_fmt * R_fmt + R_tool over an episode's main-agent turns.

    >>> total_reward("<think>\\nThe cup is red.\\n</think>\\n<answer>B</answer>",
    ...              kind="multiple_choice", target="B", executed_calls=0, tool_responses=0)
    RewardParts(accuracy=1.0, format=1.0, tool=0.0, total=2.0, degenerate=False)
    """
    s, episode = settings, _turns(turns)
    if _degenerate(episode, s):
        return RewardParts(0.0, 0.0, 0.0, 0.0, degenerate=True)
    fmt = FORMAT_RULES[s.profile](episode, s)
    accuracy = accuracy_reward(
        episode[-1], kind=kind, target=target, letters=letters,
        letter_profile=s.letter_profile, open_metric=s.open_metric,
    )  # fmt: skip
    if accuracy is None:
        return RewardParts(None, fmt, None, None)
    correct = CORRECT_RULES[s.profile](accuracy, s.threshold)
    tool = TOOL_RULES[s.profile](episode, executed_calls, tool_responses, correct, s.prefill)
    total = None if tool is None else round(accuracy + s.lambda_fmt * fmt + tool, 6)
    return RewardParts(accuracy, fmt, tool, total)


# --- TRL-style: fn(completions, **kwargs) -> list[float | None] ---------------------------
# Columns (kind, target, letters, executed_calls, tool_responses) arrive as lists, one value
# per completion; ``settings`` is bound once with functools.partial. A completion is the
# generated text or TRL conversational messages; ``settings.prefill`` goes back in front.


def episode_turns(completion: str | Sequence[Mapping[str, Any]], prefill: str | None) -> list[str]:
    """The model's whole turns: ``prefill`` + each generated assistant text (tool and user
    messages of a conversational completion are skipped)."""
    if isinstance(completion, str):
        texts = [completion]
    else:
        texts = [_text(m.get("content")) for m in completion if m.get("role") == "assistant"]
    return [with_prefix(text, prefill) if prefill else text for text in texts]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or () if isinstance(part, Mapping))


_COLUMNS = ("kind", "target", "letters", "executed_calls", "tool_responses")


def _episodes(completions: Sequence[Any], kwargs: Mapping[str, Any]) -> list[RewardParts]:
    s = kwargs.get("settings", PAPER)
    columns = {key: kwargs[key] for key in _COLUMNS if key in kwargs}
    return [
        total_reward(
            episode_turns(completion, s.prefill),
            settings=s,
            **{
                key: value[i] if isinstance(value, list) else value
                for key, value in columns.items()
            },
        )
        for i, completion in enumerate(completions)
    ]


def accuracy_rewards(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
    """R_acc per completion (0 for degenerate output); needs ``kind`` and ``target`` columns.

    >>> accuracy_rewards(["It is red.\\n</think>\\n<answer>B</answer>"], kind=["multiple_choice"],
    ...                  target=["B"])
    [1.0]
    """
    return [parts.accuracy for parts in _episodes(completions, kwargs)]


def format_rewards(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
    """R_fmt per completion, the prefill put back in front of every turn.

    >>> format_rewards(["The cup is red.\\n</think>\\n<answer>B</answer>", "B"])
    [1.0, 0.0]
    """
    s = kwargs.get("settings", PAPER)
    return [format_reward(episode_turns(c, s.prefill), s) for c in completions]


def tool_rewards(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
    """R_tool per completion; the paper profile needs ``executed_calls`` and
    ``tool_responses`` columns from the rollout, and gives None without them.

    >>> tool_rewards(["Look.\\n</think>\\n<answer>B</answer>"], kind=["multiple_choice"],
    ...              target=["B"], executed_calls=[0], tool_responses=[0])
    [0.0]
    """
    return [parts.tool for parts in _episodes(completions, kwargs)]


def total_rewards(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
    """R per completion, for engines that take one scalar (None: cannot judge)."""
    return [parts.total for parts in _episodes(completions, kwargs)]
