"""Render a run's raw records into the main agent's next request (`agents.main_turn`).

The state keeps what happened, not prompt text: the model's own turns (its model calls), each
call's record and result, the scanner's note, the length gate's verdict. This module reads
the current run's records back into the transcript the model sees, so every turn of a run,
a resumed run and a follow-up question is built the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents.main_turn import Reply, Setting, Step
from agents.protocol import with_prefix
from agents.question import Question
from agents.verify import withheld
from graphs.context import Context
from graphs.state import CallRecord, State, ToolResult

SCANNER_INTRO = "Notes a scanner agent wrote on the shared board:\n"
EARLIER_INTRO = "Notes written while answering earlier questions about this video:\n"


def of_run(records: Sequence[Mapping[str, Any]], run_id: str) -> list[Mapping[str, Any]]:
    return [r for r in records if r.get("run_id") == run_id]


def ask_of(state: State) -> Question:
    return Question(
        question=state["question"],
        options=tuple(state.get("options") or ()),
        kind=state.get("kind"),
        prompt=state.get("prompt") or None,
        system=state.get("system") or None,
    )


def setting_of(state: State, ctx: Context) -> Setting:
    return Setting.of(ctx, state.get("media", "video"))


def turn_text(call: Mapping[str, Any]) -> str:
    """A main-agent turn as the model wrote it: its prefill, then what it generated."""
    text = call["completion"]["text"]
    return with_prefix(text, call["prefill"]) if call["prefill"] else text


def replies_of(
    calls: Sequence[CallRecord], results: Sequence[ToolResult], turn: int
) -> tuple[Reply, ...]:
    """One reply per call of ``turn``, in call order."""
    by_index = {r["index"]: r for r in results if r["turn"] == turn}
    replies = []
    for call in sorted((c for c in calls if c["turn"] == turn), key=lambda c: c["index"]):
        result = by_index.get(call["index"])
        if call["error"] is not None:
            replies.append(Reply(start=call["start"], end=call["end"], error=call["error"]))
        elif result is None:
            raise RuntimeError(f"no sub-agent result for turn {turn} call {call['index']}")
        else:
            replies.append(
                Reply(
                    start=result["start"],
                    end=result["end"],
                    note=result["content"],
                    frames=result["frames"],
                    verdict=result["verdict"],
                )
            )
    return tuple(replies)


def scanner_text(result: Mapping[str, Any]) -> str:
    """The scanner's note as the checker reads it (withheld if the verify gate rejected it)."""
    if not withheld(result["verdict"]):
        return SCANNER_INTRO + result["content"]
    return SCANNER_INTRO + f"(withheld: the check judged the scanner's note {result['verdict']})"


def earlier_notes(state: State) -> list[str]:
    """Supported notes of the thread's earlier runs (for a follow-up question)."""
    run_id = state["run_id"]
    return [
        f"[{r['start']:.1f} - {r['end']:.1f} s] {r['content']}"
        for r in state.get("tool_results", [])
        if r["run_id"] != run_id and r["frames"] is None and not withheld(r["verdict"])
    ]


def main_calls(state: State) -> list[Mapping[str, Any]]:
    """The current run's main-agent model calls, in order."""
    return [c for c in of_run(state.get("model_calls", []), state["run_id"]) if c["role"] == "main"]


def steps_of(state: State, ctx: Context, coverage: str) -> list[Step]:
    """The transcript after the first user turn, for the run in progress."""
    run_id, steps = state["run_id"], []
    calls = of_run(state.get("calls", []), run_id)
    results = of_run(state.get("tool_results", []), run_id)
    if ctx.earlier_notes:
        notes = earlier_notes(state)
        if notes:
            steps.append(Step("note", EARLIER_INTRO + "\n".join(f"- {n}" for n in notes)))
    scanner = [r for r in results if r["turn"] == -1]
    if scanner:
        steps.append(Step("note", scanner_text(scanner[0])))
    for position, call in enumerate(main_calls(state)):
        turn = call["turn"]
        steps.append(Step("turn", turn_text(call)))
        if turn < state["turn"] and any(c["turn"] == turn for c in calls):
            steps.append(
                Step(
                    "replies",
                    replies=replies_of(calls, results, turn),
                    last_turn=turn + 1 >= ctx.max_turns,
                )
            )
        if state.get("rejected_turn") == position:
            steps.append(Step("note", coverage, parts=False))
    return steps
