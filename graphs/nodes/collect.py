"""Collect a turn's tool results and hand them to the main agent, in call order."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from agents import prompts
from graphs.context import Context
from graphs.messages import merge_text_parts
from graphs.state import State


async def collect(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context or Context()
    turn = state["turn"]
    results = {r["index"]: r for r in state["tool_results"] if r["turn"] == turn}
    calls = sorted((c for c in state["calls"] if c["turn"] == turn), key=lambda c: c["index"])
    if calls and calls[0]["arguments"].get("scanner"):  # two-agent mode: the board, not a tool
        return {"messages": [scanner_message(results[calls[0]["index"]])], "turn": turn + 1}
    parts = []
    for position, call in enumerate(calls):
        parts.append(prompts.text_part(("\n" if position else "") + "<tool_response>\n"))
        result = results.get(call["index"])
        if call["error"] is not None:
            parts.append(prompts.text_part(call["error"]))
        elif result is None:
            raise RuntimeError(f"no sub-agent result for turn {turn} call {call['index']}")
        elif result["verdict"] not in (None, "SUPPORTED"):
            parts.append(
                prompts.text_part(
                    f"No verified finding for {result['start']:.1f} - {result['end']:.1f} seconds "
                    f"(the check judged the note {result['verdict']})."
                )
            )
        elif result["frames"] is not None:
            parts.append(
                prompts.text_part(f"Window {result['start']:.1f} - {result['end']:.1f} seconds:")
            )
            parts.append(result["frames"])
        else:
            parts.append(prompts.text_part(result["content"]))
        parts.append(prompts.text_part("\n</tool_response>"))
    next_turn = turn + 1
    if next_turn >= ctx.max_turns:
        parts.append(prompts.text_part("\n" + prompts.forced_answer_text(state.get("kind"))))
    return {"messages": [HumanMessage(content=merge_text_parts(parts))], "turn": next_turn}


def scanner_message(result: dict) -> HumanMessage:
    """The scanner's note as the checker reads it (withheld if the verify gate rejected it)."""
    if result["verdict"] in (None, "SUPPORTED"):
        note = result["content"]
    else:
        note = f"(withheld: the check judged the scanner's note {result['verdict']})"
    text = f"Notes a scanner agent wrote on the shared board:\n{note}"
    return HumanMessage(content=[prompts.text_part(text)])
