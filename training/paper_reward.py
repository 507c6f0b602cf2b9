"""The default (``paper``) format and tool rewards: the paper's intent, scored on each main-agent
turn *including* its prefilled Think Prefix (reference/paravt-recipe.md).

Format, capped to [0, 1]: +0.2 substantive think (>= 10 chars) in every turn; +0.3
``<answer>`` / +0.2 ``</answer>`` for one non-empty answer in the last turn; +0.3 think then
a valid call with arguments; +0.1 (if anything else scored) every turn's tags paired and in
order; lambda_anchor x (+0.4 every think closed and substantive, +0.3 closed think -> answer,
-0.3 a think never closed). With Answer Suffix off the think/answer weights are 0.3/0.2/0.1,
as released (:data:`TAG_WEIGHTS`). Tag order is checked: the violations in ``_ORDER`` void
the answer, call, flow and pairing terms, so ``<answer>A</answer>`` x 30 scores 0.4.

Tool, from the rollout's record (never the text): 0.1 a call ran, 0.3 a result came back,
+0.5 (with a result) when the answer is *correct*: accuracy >= the threshold (0.5), not any
partial F1 or IoU above 0. No record: None ("cannot judge").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.protocol import Violation, parse

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
class TurnFacts:
    think: bool  # substantive think body (closed or not)
    closed: bool
    unclosed: bool  # <think> opened and never closed
    paired: bool
    call: bool  # a valid call with arguments after the think, tags in order
    answer: bool  # one non-empty answer, tags in order
    answer_closed: bool

    @classmethod
    def of(cls, turn: str) -> TurnFacts:
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


def anchor_terms(facts: Sequence[TurnFacts]) -> float:
    """Unscaled anchor terms in [-0.3, 0.7]."""
    closed = all(f.closed and f.think for f in facts)
    flow = closed and facts[-1].answer and facts[-1].answer_closed
    return 0.4 * closed + 0.3 * flow - 0.3 * any(f.unclosed for f in facts)


def format_score(turns: Sequence[str], *, answer_suffix: bool, lambda_anchor: float) -> float:
    facts = [TurnFacts.of(t) for t in turns]
    last, (w_think, w_open, w_close) = facts[-1], TAG_WEIGHTS[answer_suffix]
    score = w_think * all(f.think for f in facts) + 0.3 * any(f.think and f.call for f in facts)
    if last.answer:
        score += w_open + w_close * last.answer_closed
    if score > 0 and all(f.paired for f in facts):
        score += 0.1
    score += lambda_anchor * anchor_terms(facts)
    return min(1.0, max(0.0, score))


def tool_score(executed: int | None, responses: int | None, correct: bool) -> float | None:
    if executed is None or responses is None:
        return None  # no rollout record: cannot judge (and never a text search)
    if executed <= 0:
        return 0.0
    came_back = responses > 0
    return (0.3 if came_back else 0.1) + (0.5 if came_back and correct else 0.0)
