"""A sub-agent: looks at one window and returns a summary (or the frames) as a note."""

from __future__ import annotations

import asyncio

from langgraph.runtime import Runtime

from agents import prompts, video
from agents.completion import ChatModel, SamplingParams
from graphs.board import Board, Note
from graphs.context import Context
from graphs.state import ModelCall, SubAgentTask, ToolResult


def make_sub_agent(llm: ChatModel, board: Board):
    async def sub_agent(task: SubAgentTask, runtime: Runtime[Context]) -> dict:
        ctx = runtime.context or Context()
        start, end = task["start"], task["end"]
        timestamps = video.window_timestamps(
            start, end, fps=ctx.crop_fps, max_frames=ctx.crop_max_frames
        )
        frames = prompts.frames_part(task["video"], timestamps, ctx.crop_max_pixels)
        model_calls: list[ModelCall] = []
        prompt_tokens = completion_tokens = 0
        latency = 0.0
        if ctx.tool_result == "frames":
            # Decode here, in the parallel branch, so the main agent's request hits the cache.
            await asyncio.to_thread(
                video.encode_frames, task["video"], tuple(frames["timestamps"]), ctx.crop_max_pixels
            )
            content = f"{len(timestamps)} frames from {start:.1f} - {end:.1f} seconds."
        else:
            question = task["question"] if ctx.question_aware_subagent else None
            messages = prompts.subagent_messages(frames, start=start, end=end, question=question)
            wire = await asyncio.to_thread(prompts.expand_frames, messages)
            params = SamplingParams(temperature=0.0, max_tokens=ctx.summary_max_tokens)
            completion = await llm.complete(wire, params)
            content = completion.text.strip()
            prompt_tokens = completion.usage.prompt_tokens
            completion_tokens = completion.usage.completion_tokens
            latency = completion.latency_s
            model_calls.append(
                ModelCall(
                    agent=f"sub:{task['turn']}:{task['index']}",
                    turn=task["turn"],
                    messages=messages,
                    prefill=None,
                    completion=completion.to_record(),
                    frames_encoded=len(timestamps),
                )
            )
        note = Note(
            run_id=task["run_id"],
            key=f"t{task['turn']}c{task['index']}",
            author="sub_agent",
            turn=task["turn"],
            call_index=task["index"],
            start=start,
            end=end,
            frames=list(frames["timestamps"]),
            content=content,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=latency,
        )
        await asyncio.to_thread(board.add_note, note)
        result = ToolResult(
            turn=task["turn"],
            index=task["index"],
            start=start,
            end=end,
            timestamps=list(frames["timestamps"]),
            content=content,
            frames=frames if ctx.tool_result == "frames" else None,
        )
        return {"tool_results": [result], "model_calls": model_calls}

    return sub_agent
