"""A sub-agent: looks at one window and hands its finding to the verify gate."""

from __future__ import annotations

import asyncio
from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from agents import prompts, video
from agents.completion import ChatModel, SamplingParams
from graphs.context import Context
from graphs.state import ModelCall, SubAgentTask, ToolResult, VerifyTask


def make_sub_agent(llm: ChatModel):
    async def sub_agent(
        task: SubAgentTask, runtime: Runtime[Context]
    ) -> Command[Literal["verify_gate"]]:
        ctx = runtime.context or Context()
        start, end = task["start"], task["end"]
        info = await asyncio.to_thread(video.probe, task["video"])
        region = [start, end] if info.codec == "image" else None  # a band of the image
        if region:
            timestamps = [0.0]
        else:  # a deck shows one page per second, whatever crop_fps says
            fps = 1.0 if info.codec == "pages" else ctx.crop_fps
            timestamps = video.window_timestamps(
                start, end, fps=fps, max_frames=ctx.crop_max_frames
            )
        frames = prompts.frames_part(task["video"], timestamps, ctx.crop_max_pixels, region)
        model_calls: list[ModelCall] = []
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "latency_s": 0.0}
        if ctx.tool_result == "frames":
            # Decode here, in the parallel branch, so the main agent's request hits the cache.
            await asyncio.to_thread(
                video.encode_frames,
                task["video"],
                tuple(frames["timestamps"]),
                ctx.crop_max_pixels,
                tuple(region) if region else None,
            )
            content = f"{len(timestamps)} frames from {start:.1f} - {end:.1f} seconds."
        else:
            question = task["question"] if ctx.question_aware_subagent else None
            messages = prompts.subagent_messages(
                frames,
                start=start,
                end=end,
                question=question,
                board=readable_notes(task["board"], ctx),
                media=info.codec if video.is_still(info) else "video",
            )
            wire = await asyncio.to_thread(prompts.expand_frames, messages)
            params = SamplingParams(
                temperature=ctx.subagent_temperature, max_tokens=ctx.summary_max_tokens
            )
            completion = await llm.complete(wire, params)
            content = completion.text.strip()
            usage = {
                "prompt_tokens": completion.usage.prompt_tokens,
                "completion_tokens": completion.usage.completion_tokens,
                "latency_s": completion.latency_s,
            }
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
        result = ToolResult(
            turn=task["turn"],
            index=task["index"],
            start=start,
            end=end,
            timestamps=list(frames["timestamps"]),
            content=content,
            frames=frames if ctx.tool_result == "frames" else None,
            verdict=None,
            region=region,
        )
        handoff = VerifyTask(
            run_id=task["run_id"],
            video=task["video"],
            question=task["question"],
            result=result,
            usage=usage,
        )
        return Command(update={"model_calls": model_calls}, goto=Send("verify_gate", handoff))

    return sub_agent


def readable_notes(board: list[ToolResult], ctx: Context) -> list[str]:
    """Earlier notes a sub-agent may read: none (isolated), all (shared), or only SUPPORTED
    ones (verified), newest last, cut to `board_max_chars`."""
    if ctx.board_mode == "isolated":
        return []
    notes = [
        f"[{r['start']:.1f} - {r['end']:.1f} s] {r['content']}"
        for r in board
        if r["frames"] is None and (ctx.board_mode == "shared" or r["verdict"] == "SUPPORTED")
    ]
    kept: list[str] = []
    budget = ctx.board_max_chars
    for note in reversed(notes):  # keep the newest notes that fit
        if len(note) > budget:
            break
        kept.insert(0, note)
        budget -= len(note)
    return kept
