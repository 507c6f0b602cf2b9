"""The verify gate: the same model checks a note against its frames before it is written.

Always in the graph; outside `verified` board mode (or for the frames protocol, which has
no claim to check) it writes the note as it came.
"""

from __future__ import annotations

import asyncio

from langgraph.runtime import Runtime

from agents import prompts
from agents.completion import ChatModel
from agents.sub_turn import Window, verifier_request
from agents.verify import parse_verdict
from graphs.board import Board, Note
from graphs.context import Context
from graphs.progress import report
from graphs.state import ModelCall, VerifyTask
from graphs.traces import model_call


def make_verify_gate(llm: ChatModel, board: Board):
    async def verify_gate(task: VerifyTask, runtime: Runtime[Context]) -> dict:
        ctx = runtime.context
        result = dict(task["result"])
        model_calls: list[ModelCall] = []
        if ctx.board_mode == "verified" and result["frames"] is None:
            window = Window(
                task["video"],
                task["media"],
                result["start"],
                result["end"],
                result["turn"],
                result["index"],
            )
            frames = prompts.frames_part(
                task["video"], result["timestamps"], ctx.crop_max_pixels, result.get("region")
            )
            request = verifier_request(
                window, frames, question=task["question"], claim=result["content"]
            )
            completion = await llm.complete(request)
            result["verdict"], _ = parse_verdict(completion.text)
            model_calls.append(model_call(task["run_id"], request, completion))
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
        report(
            "note",
            run_id=task["run_id"],
            turn=result["turn"],
            call=result["index"],
            start=result["start"],
            end=result["end"],
            verdict=result["verdict"],
            note=result["content"],
        )
        return {"tool_results": [result], "model_calls": model_calls}

    return verify_gate
