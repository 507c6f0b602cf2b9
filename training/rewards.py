"""PARA-GRPO rewards: R = R_acc + lambda_fmt * R_fmt + R_tool, per episode, TRL-style.

Cores score the main agent's turns of one episode (a str is a one-turn episode), each turn
*including* its prefilled Think Prefix; ``*_rewards(completions, **kwargs)`` rebuild those
turns from generated text and return one float per completion, or None ("cannot judge").
``RewardSettings.profile`` picks the rules:

- ``"paper"`` (default): the paper's intent (:mod:`training.paper_reward` for format and
  tool); accuracy is :func:`agents.scoring.accuracy.accuracy_reward`, the score the needle
  benchmark reports, read by :func:`agents.scoring.extract.extract_answer` (its docstring
  states the rules for answers outside the grammar). Rewards are never rounded.
- ``"release"``: the ParaVT release's ``compose_reward`` bit for bit
  (:mod:`training.release_reward`, proven by tests/parity/test_parity_rewards.py), defects and its
  own answer extraction and matching included, on the text the release sees: the generated
  turns joined, prefill and tool responses unseen.

``docs/rewards.md`` tabulates every reply of the parity corpus on which the two differ, with
the reason. Degenerate output (>= 5 ``<|im_start|>`` and < 300 chars) scores 0 in every part.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from agents.protocol import THINK_PREFIX, with_prefix
from agents.scoring.accuracy import OPEN_METRICS, accuracy_reward
from training import paper_reward, release_reward
from training.paper_reward import TAG_WEIGHTS, TurnFacts, anchor_terms

Profile = Literal["paper", "release"]
Turns = str | Sequence[str]
__all__ = ["TAG_WEIGHTS", "RewardParts", "RewardSettings", "total_reward"]


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
    release_im_end: bool = True  # the release's decode keeps each turn's <|im_end|>

    def __post_init__(self) -> None:
        if self.profile not in get_args(Profile) or self.open_metric not in OPEN_METRICS:
            raise ValueError(f"unknown profile or open_metric in {self}")

    @property
    def recipe(self) -> release_reward.ReleaseRecipe:
        """The release's environment for these settings."""
        return release_reward.ReleaseRecipe(
            answer_suffix=self.answer_suffix,
            anchor_weight=self.lambda_anchor,
            format_weight=self.lambda_fmt,
            mode=self.open_metric,
        )


PAPER = RewardSettings()
RELEASE = RewardSettings(profile="release")


def is_degenerate(text: str) -> bool:
    """The release's short-circuit shape: >= 5 ``<|im_start|>`` in under 300 characters."""
    return text.count("<|im_start|>") >= 5 and len(text) < 300


def _turns(turns: Turns) -> list[str]:
    return [turns] if isinstance(turns, str) else list(turns) or [""]


def _seen(episode: list[str], s: RewardSettings, stopped: Sequence[bool] | None = None) -> str:
    """The text each profile reads as a whole (the degenerate rule is applied to it)."""
    if s.profile == "release":
        return release_reward.release_text(
            episode, s.prefill, im_end=s.release_im_end, stopped=stopped
        )
    return "".join(episode)


def anchor_reward(turns: Turns) -> float:
    """Unscaled anchor terms in [-0.3, 0.7] (paper profile): +0.4 every think closed, +0.3
    closed think -> answer in the last turn, -0.3 when a think is never closed.

    >>> anchor_reward("<think>\\nThe cup is red.\\n</think>\\n<answer>B</answer>")
    0.7
    >>> anchor_reward("<think>\\nThe cup is red.\\n<answer>B</answer>")
    -0.3
    """
    return anchor_terms([TurnFacts.of(t) for t in _turns(turns)])


def format_reward(turns: Turns, settings: RewardSettings = PAPER) -> float:
    """R_fmt of an episode's main-agent turns, each including its prefill.

    >>> perfect = "<think>\\nThe cup is red.\\n</think>\\n<answer>B</answer>"
    >>> dropped = "<think>\\nThe cup is red.\\n<answer>B</answer>"
    >>> format_reward(perfect), round(format_reward(dropped), 6)  # rounded here to print only
    (1.0, 0.55)
    >>> format_reward(perfect, RELEASE), format_reward(dropped, RELEASE)
    (0.5, 0.6)
    """
    episode, s = _turns(turns), settings
    text = _seen(episode, s)
    if is_degenerate(text):
        return 0.0
    if s.profile == "release":
        return release_reward.format_score(text, s.recipe)
    return paper_reward.format_score(
        episode, answer_suffix=s.answer_suffix, lambda_anchor=s.lambda_anchor
    )


def tool_reward(
    turns: Turns,
    *,
    executed_calls: int | None,
    tool_responses: int | None,
    correct: bool,
    settings: RewardSettings = PAPER,
) -> float | None:
    """R_tool. Paper: from the rollout's record (calls that passed validation and ran, results
    that came back; None without a record); the text is not searched. Release: only the text,
    ``correct`` meaning any accuracy above 0.

    >>> call = '<think>\\nCheck 10-20 s.\\n</think>\\n<tool_call>{"name": "crop_video", ' \\
    ...        '"arguments": {"start_time": 10, "end_time": 20}}</tool_call>'
    >>> tool_reward(call, executed_calls=1, tool_responses=1, correct=True)
    0.8
    >>> tool_reward(call, executed_calls=1, tool_responses=1, correct=True, settings=RELEASE)
    0.6
    """
    episode, s = _turns(turns), settings
    text = _seen(episode, s)
    if is_degenerate(text):
        return 0.0
    if s.profile == "release":
        return release_reward.tool_score(text, 1.0 if correct else 0.0)
    return paper_reward.tool_score(executed_calls, tool_responses, correct)


@dataclass(frozen=True)
class RewardParts:
    """One episode's reward and its parts; None where it cannot be judged."""

    accuracy: float | None
    format: float
    tool: float | None
    total: float | None
    degenerate: bool = False


def release_gold(kind: str, target: Any) -> str:
    """The gold as the release's dataset writes it: a letter, "[start, end]", or the text."""
    if kind == "grounding" and not isinstance(target, str):
        start, end = target
        return f"[{float(start)}, {float(end)}]"
    return str(target)


def total_reward(
    turns: Turns,
    *,
    kind: str,
    target: Any,
    executed_calls: int | None = None,
    tool_responses: int | None = None,
    letters: str = "ABCD",
    settings: RewardSettings = PAPER,
    stopped: Sequence[bool] | None = None,
) -> RewardParts:
    """R = R_acc + lambda_fmt * R_fmt + R_tool over an episode's main-agent turns.

    ``stopped`` says, per turn, whether the model ended it (False: cut off at its token cap);
    the release profile reads it (``release_reward.release_text``).

    >>> total_reward("<think>\\nThe cup is red.\\n</think>\\n<answer>B</answer>",
    ...              kind="multiple_choice", target="B", executed_calls=0, tool_responses=0)
    RewardParts(accuracy=1.0, format=1.0, tool=0.0, total=2.0, degenerate=False)
    """
    s, episode = settings, _turns(turns)
    text = _seen(episode, s, stopped)
    if is_degenerate(text):
        return RewardParts(0.0, 0.0, 0.0, 0.0, degenerate=True)
    if s.profile == "release":
        question_type = release_reward.RELEASE_QUESTION_TYPES.get(kind, "oe")
        try:
            total, parts = release_reward.release_reward(
                text, release_gold(kind, target), question_type, s.recipe
            )
        except ValueError:  # where the release raises ("20.0." read as a time): no credit
            fmt = release_reward.format_score(text, s.recipe)
            tool = release_reward.tool_score(text, 0.0)
            return RewardParts(0.0, fmt, tool, s.lambda_fmt * fmt + tool)
        return RewardParts(parts["acc_reward"], parts["format_reward"], parts["tool_reward"], total)
    fmt = paper_reward.format_score(
        episode, answer_suffix=s.answer_suffix, lambda_anchor=s.lambda_anchor
    )
    accuracy = accuracy_reward(
        episode[-1],
        kind=kind,
        target=target,
        letters=letters,
        letter_profile=s.letter_profile,
        open_metric=s.open_metric,
    )
    if accuracy is None:
        return RewardParts(None, fmt, None, None)
    tool = paper_reward.tool_score(executed_calls, tool_responses, accuracy >= s.threshold)
    total = None if tool is None else accuracy + s.lambda_fmt * fmt + tool
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
