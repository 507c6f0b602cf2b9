"""Prepare a run: check the video, pick overview frames, open the run on the board."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import asdict

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from agents import prompts, video
from graphs.board import Board
from graphs.context import Context
from graphs.state import CallRecord, State


def make_prepare(board: Board):
    async def prepare(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict:
        ctx = runtime.context or Context()
        info = await asyncio.to_thread(video.probe, state["video"])
        run_id = state.get("run_id") or uuid.uuid4().hex[:12]
        thread_id = str(config.get("configurable", {}).get("thread_id", run_id))
        timestamps = video.overview_timestamps(info.duration, overview_count(info, ctx))
        overview = await asyncio.to_thread(  # keyframe sampling reads the file's packets
            prompts.frames_part,
            info.path,
            timestamps,
            ctx.overview_max_pixels,
            sampling=ctx.overview_sampling,
        )
        content = prompts.main_user_content(
            state["question"],
            overview,
            options=state.get("options", []),
            kind=state.get("kind"),
            duration=info.duration,
            prompt=state.get("prompt"),
        )
        if ctx.calls_per_turn == 0 or ctx.max_turns == 0:
            content.append(prompts.text_part("\n" + prompts.forced_answer_text(state.get("kind"))))
        await asyncio.to_thread(
            board.start_run,
            run_id,
            video=info.path,
            question=state["question"],
            settings=asdict(ctx),
            thread_id=thread_id,
        )
        scanner = []
        if ctx.scanner_first:  # a call nobody typed: the scanner's window is the whole input
            scanner = [
                CallRecord(
                    turn=-1,
                    index=0,
                    arguments={"scanner": True},
                    start=0.0,
                    end=info.duration,
                    error=None,
                )
            ]
        return {
            "calls": scanner,
            "run_id": run_id,
            "video": info.path,
            "duration": info.duration,
            "overview": overview,
            "turn": -1 if scanner else 0,  # the scanner's pass is turn -1
            "status": "running",
            "answer": None,
            "final_text": None,
            "final_reply": None,
            "length_retried": False,
            "messages": [
                SystemMessage(
                    content=prompts.main_system_prompt(ctx.dispatch, ctx.max_parallel, info.codec)
                ),
                HumanMessage(content=content),
            ],
        }

    return prepare


def overview_count(info: video.VideoInfo, ctx: Context) -> int:
    """Overview frames: one for an image, at most one per page for a deck."""
    if info.codec == "image":
        return 1
    if info.codec == "pages":
        return min(ctx.overview_frames, int(info.duration))
    return ctx.overview_frames
