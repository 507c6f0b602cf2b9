"""The verify gate: the same model checks a note against its frames before it is written.

Only `verified` board mode routes text findings here (`graphs.notes.needs_verification`);
otherwise a sub-agent posts its own note and the run skips this node.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from agents import prompts
from agents.client.completion import ChatModel
from agents.sub_turn import Window, verifier_request
from agents.verify import parse_verdict
from graphs.context import Context, effective, model_of
from graphs.notes import needs_verification, post_note
from graphs.runs.traces import model_call
from graphs.state import ModelCall, VerifyTask
from graphs.store.board import BoardStore


def make_verify_gate(llm: ChatModel | None, board: BoardStore):
    async def verify_gate(task: VerifyTask, runtime: Runtime[Context]) -> dict:
        ctx = effective(runtime.context)
        result = dict(task["result"])
        model_calls: list[ModelCall] = []
        # true for every finding routed here, except one a thread saved by an older graph
        # (which sent every note through this gate) resumes with: that one is written as is
        if needs_verification(ctx, result):
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
            completion = await model_of(runtime.context, llm).complete(request)
            result["verdict"], _ = parse_verdict(completion.text)
            model_calls.append(model_call(task["run_id"], request, completion))
        await post_note(board, task, result)
        return {"tool_results": [result], "model_calls": model_calls}

    return verify_gate
