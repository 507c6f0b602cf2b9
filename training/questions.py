"""The one training question type: a question about a video, with its gold target in the
form the rewards read. Every rollout engine (the GRPO engine, AReaL's workflow) and every
data file (needle manifests, AReaL's JSONL rows) becomes these."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.prompts import implied_kind
from agents.question import Question


@dataclass(frozen=True)
class RLPrompt:
    """One training question. ``id`` keys nFrames Gating's draw; ``epoch`` a redraw per epoch."""

    id: str
    video: str
    question: str
    options: tuple[str, ...]
    kind: str  # "multiple_choice" | "grounding" | "open_ended"
    target: Any  # a letter or text (str), or a (start, end) window
    prompt: str | None = None  # the benchmark's question block, as evaluation sends it
    system: str | None = None  # the data's own system prompt (ParaVT's RL rows, release-rl)
    epoch: int = 0

    @property
    def ask(self) -> Question:
        """The question as the agent is asked it."""
        return Question(self.question, self.options, self.kind, self.prompt, self.system)

    @classmethod
    def from_data(cls, data: Mapping[str, Any], video_root: str | None = None) -> RLPrompt:
        """A data row (id, video, question, target; options, kind, prompt, system, epoch
        optional);
        a relative video path is under ``video_root``."""
        missing = [k for k in ("id", "video", "question", "target") if data.get(k) in (None, "")]
        if missing:
            raise KeyError(f"data row lacks {missing}; rows need id, video, question, target")
        path = str(data["video"])
        if video_root and not Path(path).is_absolute():
            path = str(Path(video_root) / path)
        target, options = normalise_target(data["target"]), tuple(data.get("options") or ())
        return cls(
            id=str(data["id"]),
            video=path,
            question=str(data["question"]),
            options=options,
            kind=data.get("kind") or _kind_of(target, options),
            target=target,
            prompt=data.get("prompt") or None,
            system=data.get("system") or None,
            epoch=int(data.get("epoch") or 0),
        )


def _kind_of(target: Any, options: Sequence[str]) -> str:
    if isinstance(target, tuple):
        return "grounding"
    return implied_kind(options)


def normalise_target(target: Any) -> Any:
    """Gold as the scorers take it: a letter or text (str), or a (start, end) window.

    >>> normalise_target({"start": 12, "end": 20.5}), normalise_target({"letter": "B"})
    ((12.0, 20.5), 'B')
    """
    if isinstance(target, Mapping):
        if "start" in target and "end" in target:
            return float(target["start"]), float(target["end"])
        for key in ("letter", "text", "answer"):
            if key in target:
                return str(target[key])
        raise ValueError(f"unreadable target {target!r}: use letter, text, or start and end")
    if isinstance(target, Sequence) and not isinstance(target, str):
        start, end = target  # a window; anything else is a data error
        return float(start), float(end)
    return str(target)
