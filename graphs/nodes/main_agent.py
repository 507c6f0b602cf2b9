"""The main agent: one model turn that either answers or asks for crop_video windows."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from agents import prompts
from agents.completion import ChatModel, SamplingParams
from agents.protocol import THINK_PREFIX, ToolCall, parse, with_prefix
from agents.tools import ToolArgumentError, validate_crop
from graphs.context import Context
from graphs.messages import to_openai
from graphs.state import CallRecord, ModelCall, State


def make_main_agent(llm: ChatModel):
    async def main_agent(state: State, runtime: Runtime[Context]) -> dict:
        ctx = runtime.context or Context()
        turn = state["turn"]
        forced = turn >= ctx.max_turns or ctx.calls_per_turn == 0 or state.get("length_retried")
        messages = to_openai(state["messages"])
        wire = await asyncio.to_thread(prompts.expand_frames, messages)
        prefill = THINK_PREFIX if ctx.think_prefix else None
        params = SamplingParams(
            temperature=ctx.temperature,
            top_p=ctx.top_p,
            max_tokens=ctx.max_new_tokens,
            seed=ctx.seed,
        )
        completion = await llm.complete(wire, params, prefill=prefill)
        text = with_prefix(completion.text, prefill) if prefill else completion.text
        parsed = parse(text)
        update: dict = {
            "messages": [AIMessage(content=text)],
            "violations": [[str(v) for v in parsed.violations]],
            "model_calls": [
                ModelCall(
                    agent="main",
                    turn=turn,
                    messages=messages,
                    prefill=prefill,
                    completion=completion.to_record(),
                    frames_encoded=prompts.count_frames(messages),
                )
            ],
        }
        if parsed.answer or forced or not parsed.tool_calls:
            update |= {
                "answer": parsed.answer or None,
                "final_text": text,
                "final_reply": completion.text,
                "status": "answered" if parsed.answer else "no_answer",
            }
        else:
            update["calls"] = validate_calls(
                parsed.tool_calls, turn=turn, duration=state["duration"], cap=ctx.calls_per_turn
            )
        return update

    return main_agent


def validate_calls(
    calls: Sequence[ToolCall], *, turn: int, duration: float, cap: int
) -> list[CallRecord]:
    """Check every call of a turn; a bad or surplus call gets a message for the model."""
    records = []
    for position, call in enumerate(calls):
        start = end = error = None
        if position >= cap:
            error = (
                f"{call.name or 'tool'}: refused, at most {cap} call(s) per turn; this call was "
                "not run. Ask again next turn if you still need this window."
            )
        else:
            try:
                window = validate_crop(call, duration)
                start, end = window.start, window.end
            except ToolArgumentError as exc:
                error = str(exc)
        records.append(
            CallRecord(
                turn=turn,
                index=position,
                arguments=dict(call.arguments),
                start=start,
                end=end,
                error=error,
            )
        )
    return records
