"""The conversation as chat clients show it: LangChain messages built from the run's records.

A tool turn is an ``AIMessage`` whose content is the model's reasoning in plain words and
whose ``tool_calls`` are its crop_video calls; each call's result is a ``ToolMessage`` with
that call's id (an error status for a refused call); an answer is an ``AIMessage`` with the
answer in plain words. No tags, no prompt text, no images: frames stay references, in the
tool message's ``artifact``. ``additional_kwargs["paravt"]`` keeps the raw turn for tools.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, ToolMessage

from agents.protocol import ParsedTurn
from agents.verify import withheld
from graphs.state import CallRecord, ToolResult


def call_id(run_id: str, turn: int, index: int) -> str:
    return f"{run_id}-t{turn}-c{index}"


def main_message_id(run_id: str, n: int) -> str:
    """The id of the run's n-th main-agent message (its tokens stream under it too)."""
    return f"{run_id}-main{n}"


def tool_turn_message(
    parsed: ParsedTurn, calls: Sequence[CallRecord], *, run_id: str, text: str, message_id: str
) -> AIMessage:
    """The main agent asking for windows: its reasoning, and one tool call per call."""
    tool_calls = [
        {
            "name": "crop_video",
            "args": dict(call["arguments"]),
            "id": call_id(run_id, call["turn"], call["index"]),
            "type": "tool_call",
        }
        for call in calls
    ]
    turn = calls[0]["turn"] if calls else 0
    return AIMessage(
        content=(parsed.think or "").strip(),
        tool_calls=tool_calls,
        id=message_id,
        additional_kwargs={"paravt": {"run_id": run_id, "turn": turn, "raw": text}},
    )


def tool_message(call: CallRecord, result: ToolResult | None) -> ToolMessage:
    """One call's result, as the tool card shows it."""
    ident = call_id(call["run_id"], call["turn"], call["index"])
    meta = {
        "run_id": call["run_id"],
        "turn": call["turn"],
        "index": call["index"],
        "start": call["start"],
        "end": call["end"],
    }
    if call["error"] is not None or result is None:
        return ToolMessage(
            content=call["error"] or "no result",
            tool_call_id=ident,
            status="error",
            id=f"{ident}-result",
            additional_kwargs={"paravt": meta},
        )
    meta["verdict"] = result["verdict"]
    if withheld(result["verdict"]):
        content = (
            f"No verified finding for {result['start']:.1f} - {result['end']:.1f} seconds "
            f"(the check judged the note {result['verdict']}): {result['content']}"
        )
    else:
        content = result["content"]
    return ToolMessage(
        content=content,
        tool_call_id=ident,
        id=f"{ident}-result",
        artifact=result["frames"],
        additional_kwargs={"paravt": meta},
    )


def plain_answer(answer: str | None, options: Sequence[str]) -> str:
    """The answer in words: an option letter becomes its option line."""
    if not answer:
        return "I could not find an answer: the model's last turn gave none."
    letter = answer.strip().strip("().").upper()
    for option in options:
        if len(letter) == 1 and option[:1].upper() == letter and option[1:2] in ".):":
            return option.strip()
    return answer.strip()


def answer_message(
    answer: str | None,
    options: Sequence[str],
    *,
    run_id: str,
    turn: int,
    text: str,
    message_id: str,
) -> AIMessage:
    """The main agent's answer, in plain words."""
    return AIMessage(
        content=plain_answer(answer, options),
        id=message_id,
        additional_kwargs={"paravt": {"run_id": run_id, "turn": turn, "raw": text}},
    )
