"""The verify gate: the same model checks a note against its frames before it is written.

Always in the graph; outside `verified` board mode (or for the frames protocol, which has
no claim to check) it writes the note as it came.
"""

from __future__ import annotations

import asyncio

from langgraph.runtime import Runtime

from agents import prompts
from agents.completion import ChatModel, SamplingParams
from agents.verify import MAX_VERDICT_TOKENS, parse_verdict, verify_messages
from graphs.board import Board, Note
from graphs.context import Context
from graphs.state import ModelCall, VerifyTask


def make_verify_gate(llm: ChatModel, board: Board):
    async def verify_gate(task: VerifyTask, runtime: Runtime[Context]) -> dict:
        ctx = runtime.context or Context()
        result = dict(task["result"])
        model_calls: list[ModelCall] = []
        if ctx.board_mode == "verified" and result["frames"] is None:
            frames = prompts.frames_part(
                task["video"], result["timestamps"], ctx.crop_max_pixels, result.get("region")
            )
            messages = verify_messages(frames, question=task["question"], claim=result["content"])
            wire = await asyncio.to_thread(prompts.expand_frames, messages)
            params = SamplingParams(temperature=0.0, max_tokens=MAX_VERDICT_TOKENS)
            completion = await llm.complete(wire, params)
            result["verdict"], _ = parse_verdict(completion.text)
            model_calls.append(
                ModelCall(
                    agent=f"verify:{result['turn']}:{result['index']}",
                    turn=result["turn"],
                    messages=messages,
                    prefill=None,
                    completion=completion.to_record(),
                    frames_encoded=len(result["timestamps"]),
                )
            )
        usage = task["usage"]
        note = Note(
            run_id=task["run_id"],
            key=f"t{result['turn']}c{result['index']}",
            author="sub_agent",
            turn=result["turn"],
            call_index=result["index"],
            start=result["start"],
            end=result["end"],
            frames=list(result["timestamps"]),
            content=result["content"],
            verdict=result["verdict"],
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            latency_s=usage["latency_s"],
        )
        await asyncio.to_thread(board.add_note, note)
        return {"tool_results": [result], "model_calls": model_calls}

    return verify_gate
