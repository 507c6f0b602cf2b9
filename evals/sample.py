"""One evaluation item, as every task's loader produces it and the runner consumes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agents.prompts import QuestionKind
from agents.question import Question

Kind = QuestionKind  # the agent's own three kinds


@dataclass(frozen=True)
class Sample:
    """A benchmark item ready to run: media, the prompt text, and what scoring needs."""

    id: str  # unique within the task (e.g. VideoMME question_id "001-1")
    media: str  # absolute path of the video (or image)
    question: str  # the raw question
    prompt: str  # the full question block sent to the model (task's official prompt)
    kind: Kind
    target: str  # gold letter, "start-end" seconds, or reference text
    options: tuple[str, ...] = ()  # "A. ..." lines for multiple choice
    cluster: str = ""  # items sharing a cluster (a video) are not independent
    categories: dict[str, str | list[str]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # task-specific (gold interval, ...)

    def ask(self, prompt: str | None = None) -> Question:
        """The question as the agent is asked it, with `prompt` as its question block (a
        protocol's own; the sample's when None)."""
        block = self.prompt if prompt is None else prompt
        return Question(self.question, self.options, self.kind, block or None)


class RecordError(ValueError):
    """A malformed benchmark record; the message names its file and id and what is wrong."""

    def __init__(self, source: str, record_id: str, problem: str):
        super().__init__(f"{source}: record {record_id!r}: {problem}")
        self.source = source
        self.record_id = record_id
        self.problem = problem
