"""A question as it is asked: the one type chat, the CLI, evaluation, rollouts and the nano
hand the agent.

Items that also carry a gold answer (an eval `evals.sample.Sample`, a training
`training.questions.RLPrompt`, a synthetic video's `agents.synthetic.QAItem`) give theirs
as ``.ask``; the graph's prepare node reads one from a chat message or the input fields
(`graphs.asking`), and the protocols render it (`agents.protocols`).
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.prompts import QuestionKind


@dataclass(frozen=True)
class Question:
    """The question, its options and what the source fixes about how it is put."""

    question: str
    options: tuple[str, ...] = ()  # "A. red" lines; empty unless multiple choice
    kind: QuestionKind | None = None  # None: multiple choice with options, else open-ended
    prompt: str | None = None  # a benchmark's own question block, used instead of the default
    system: str | None = None  # a dataset's own system prompt (the release's RL rows)
