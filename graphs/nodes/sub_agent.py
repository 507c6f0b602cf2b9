"""A sub-agent: looks at one window and posts its finding as a note, or hands it to the verify
gate when the run checks notes."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Literal

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

NO_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "latency_s": 0.0}


async def read_window(
    llm: ChatModel,
    ctx: Context,
    window: Window,
    frames: Mapping[str, Any],
    *,
    run_id: str,
    question: str,
    board: Sequence[ToolResult],
) -> tuple[str, dict[str, Any], list[ModelCall]]:
    """(the note, its usage, the model call) of one look at `frames` of `window`; without a
    sub-agent request (the frames protocol) the note is a caption of the frames."""
    protocol = get_protocol(ctx.protocol)
    times = frames["timestamps"]
    request = protocol.subagent_request(
        window,
        frames,
        ctx=ctx,
        question=question if ctx.question_aware_subagent else None,
        board=readable_notes(board, ctx.board_mode, ctx.board_max_chars),
    )
    # Decode here, in the parallel branch (the main agent's next request then hits the
    # cache), and build what the request sends in the same trip off the loop.
    if request is not None:
        await prepare_request(request)
    else:
        await asyncio.to_thread(frame_store.ref_frames, frames)
    report("frames", run_id=run_id, turn=window.turn, call=window.index, frames=len(times))
    if request is None:
        return (
            f"{len(times)} frames from {window.start:.1f} - {window.end:.1f} seconds.",
            NO_USAGE,
            [],
        )
    completion = await llm.complete(request)
    usage = {
        "prompt_tokens": completion.usage.prompt_tokens,
        "completion_tokens": completion.usage.completion_tokens,
        "latency_s": completion.latency_s,
    }
    note = protocol.note_of(completion.text, completion.finish_reason)
    return note, usage, [model_call(run_id, request, completion)]


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
        content, usage, model_calls = await read_window(
            model_of(runtime.context, llm),
            ctx,
            window,
            frames,
            run_id=task["run_id"],
            question=task["question"],
            board=task["board"],
        )
        result = ToolResult(
            run_id=task["run_id"],
            turn=window.turn,
            index=window.index,
            start=window.start,
            end=window.end,
            timestamps=list(frames["timestamps"]),
            content=content,
            frames=frames if not model_calls else None,
            verdict=None,
            region=frames.get("region"),
        )
        finding = VerifyTask(
            run_id=task["run_id"],
            video=window.video,
            media=window.codec,
            question=task["question"],
            result=result,
            usage=usage,
            board=task["board"],
        )
        if needs_verification(ctx, result):
            return Command(update={"model_calls": model_calls}, goto=Send("verify_gate", finding))
        await post_note(board, finding, result)
        return Command(
            update={"model_calls": model_calls, "tool_results": [result]}, goto="collect"
        )

    return sub_agent
