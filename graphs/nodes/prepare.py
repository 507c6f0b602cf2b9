"""Prepare a run: read the question and its video, check the settings fit the served model,
pick overview frames, open the run."""

from __future__ import annotations

import asyncio
import functools

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from agents import prompts
from agents.client.completion import ChatModel
from agents.media import video
from agents.media.sampling import overview_times
from agents.protocols import get_protocol
from agents.question_rules import QuestionRefused
from graphs.admission import MediaRefused, MediaRoots
from graphs.asking import humans, next_question
from graphs.budget import budget_problem, served_context_length, window_frames_cap
from graphs.context import Context, effective, settings_of
from graphs.runs import offload
from graphs.runs.progress import report
from graphs.state import CallRecord, State
from graphs.store.board import BoardStore


def make_prepare(board: BoardStore, media: MediaRoots, llm: ChatModel | None):
    async def prepare(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict:
        ctx = effective(runtime.context)
        protocol = get_protocol(ctx.protocol)
        try:
            q = await offload.files_call(next_question, state, ctx, media)
            info = await offload.probe(q.video)
        except (MediaRefused, QuestionRefused, video.VideoError) as exc:
            return refusal(state, str(exc))
        refused = protocol.refusal(ctx, media=info.codec)
        if refused:
            return refusal(state, refused)
        thread_id = str(config.get("configurable", {}).get("thread_id", q.run_id))
        times = overview_times(info.codec, info.duration, ctx.overview_frames)
        count = len(times)
        own = protocol.name == "paravt"  # the budget check knows this protocol's frames
        model = getattr(runtime.context, "model", None) or llm  # main_agent says if none
        limit = await served_context_length(model) if own and model else None
        window = window_frames_cap(ctx, info.codec, info.duration)
        too_big = budget_problem(ctx, info, count, window, limit) if limit else ""
        overview = state.get("overview")
        if too_big:  # fail before decoding: the run is recorded, with the settings to change
            overview = {"video": info.path, "timestamps": [], "max_pixels": 0}
        elif not own:  # the frame table is read from the file's packets: off the loop
            overview = await asyncio.to_thread(protocol.overview, info, ctx)
        elif not _same_overview(overview, info.path, times, ctx):  # a follow-up reuses them
            part = functools.partial(
                prompts.frames_part,
                info.path,
                times,
                ctx.overview_max_pixels,
                sampling=ctx.overview_sampling,
            )  # only keyframe sampling reads the file (its packets): the rest is arithmetic
            keyframes = ctx.overview_sampling == "keyframe"
            overview = await asyncio.to_thread(part) if keyframes else part()
        report("overview", run_id=q.run_id, frames=len(overview["timestamps"]))
        await offload.board_call(
            board,
            board.start_run,
            q.run_id,
            video=info.path,
            question=q.ask.question,
            settings=settings_of(ctx),
            thread_id=thread_id,
            source=q.source,
        )
        scanner = []
        if ctx.scanner_first:  # a call nobody typed: the scanner's window is the whole input
            scanner = [
                CallRecord(
                    run_id=q.run_id,
                    turn=-1,
                    index=0,
                    arguments={"scanner": True},
                    start=0.0,
                    end=info.duration,
                    error=None,
                )
            ]
        refused = [AIMessage(content=too_big, id=f"refusal-{q.asked}")] if too_big else []
        return {
            "messages": ([q.human] if q.human else []) + refused,
            "calls": [] if too_big else scanner,
            "run_id": q.run_id,
            "video": info.path,
            "question": q.ask.question,
            "options": list(q.ask.options),
            "kind": q.ask.kind,
            "prompt": q.ask.prompt or "",
            "system": q.ask.system,
            "source": q.source or {},
            "duration": info.duration,
            "media": info.codec,
            "overview": overview,
            "asked": q.asked,
            "turn": -1 if scanner else 0,  # the scanner's pass is turn -1
            "status": "failed" if too_big else "running",
            "answer": None,
            "final_text": None,
            "final_reply": None,
            "rejected_turn": None,
            "refusal": too_big or None,
        }

    return prepare


def refusal(state: State, message: str) -> dict:
    """Nothing to run (no video, a path refused, an unreadable file): say why, in the chat.
    The question has no run (``run_id`` None), so the board records none."""
    asked = len(humans(state))
    return {
        "messages": [AIMessage(content=message, id=f"refusal-{asked}")],
        "run_id": None,
        "asked": asked,
        "status": "failed",
        "refusal": message,
        "answer": None,
    }


def _same_overview(overview, path: str, times, ctx: Context) -> bool:
    if not overview or overview.get("video") != path:
        return False
    wanted = overview.get("requested", overview["timestamps"])
    return (
        [round(t, 3) for t in times] == wanted
        and overview["max_pixels"] == ctx.overview_max_pixels
        and overview.get("sampling", "exact") == ctx.overview_sampling
    )
