"""A sub-agent: looks at one window and posts its finding as a note, or hands it to the verify
gate when the run checks notes."""

from __future__ import annotations

import asyncio
from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from agents.client.completion import ChatModel
from agents.media import frame_store, video
from agents.protocols import get_protocol
from agents.sub_turn import Window, readable_notes
from graphs.context import Context, effective, model_of
from graphs.notes import needs_verification, post_note
from graphs.runs.offload import prepare_request
from graphs.runs.progress import report
from graphs.runs.traces import model_call
from graphs.state import ModelCall, SubAgentTask, ToolResult, VerifyTask
from graphs.store.board import BoardStore


def make_sub_agent(llm: ChatModel | None, board: BoardStore):
    async def sub_agent(
        task: SubAgentTask, runtime: Runtime[Context]
    ) -> Command[Literal["verify_gate", "collect"]]:
        ctx = effective(runtime.context)
        protocol = get_protocol(ctx.protocol)
        window = Window(
            task["video"], task["media"], task["start"], task["end"], task["turn"], task["index"]
        )
        info = video.probed(window.video) or await asyncio.to_thread(video.probe, window.video)
        if protocol.name == "paravt":
            frames = protocol.window_frames(window, info, ctx)  # arithmetic only
        else:  # the frame table is read from the file's packets once per process
            frames = await asyncio.to_thread(protocol.window_frames, window, info, ctx)
        region = frames.get("region")
        times = tuple(frames["timestamps"])
        model_calls: list[ModelCall] = []
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "latency_s": 0.0}
        request = protocol.subagent_request(
            window,
            frames,
            ctx=ctx,
            question=task["question"] if ctx.question_aware_subagent else None,
            board=readable_notes(task["board"], ctx.board_mode, ctx.board_max_chars),
        )
        # Decode here, in the parallel branch (the main agent's next request then hits the
        # cache), and build what the request sends in the same trip off the loop.
        if request is not None:
            await prepare_request(request)
        else:
            await asyncio.to_thread(frame_store.ref_frames, frames)
        report(
            "frames", run_id=task["run_id"], turn=window.turn, call=window.index, frames=len(times)
        )
        if request is None:
            content = f"{len(times)} frames from {window.start:.1f} - {window.end:.1f} seconds."
        else:
            completion = await model_of(runtime.context, llm).complete(request)
            content = protocol.note_of(completion.text, completion.finish_reason)
            usage = {
                "prompt_tokens": completion.usage.prompt_tokens,
                "completion_tokens": completion.usage.completion_tokens,
                "latency_s": completion.latency_s,
            }
            model_calls.append(model_call(task["run_id"], request, completion))
        result = ToolResult(
            run_id=task["run_id"],
            turn=window.turn,
            index=window.index,
            start=window.start,
            end=window.end,
            timestamps=list(times),
            content=content,
            frames=frames if request is None else None,
            verdict=None,
            region=region,
        )
        finding = VerifyTask(
            run_id=task["run_id"],
            video=window.video,
            media=window.codec,
            question=task["question"],
            result=result,
            usage=usage,
        )
        if needs_verification(ctx, result):
            return Command(update={"model_calls": model_calls}, goto=Send("verify_gate", finding))
        await post_note(board, finding, result)
        return Command(
            update={"model_calls": model_calls, "tool_results": [result]}, goto="collect"
        )

    return sub_agent
