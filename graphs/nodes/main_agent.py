"""The main agent: one model turn that either answers or asks for crop_video windows."""

from __future__ import annotations

import asyncio

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from agents.client.completion import ChatModel
from agents.media import video
from agents.protocol import parse, with_prefix
from agents.protocols import EpisodeError, get_protocol
from graphs.calls import call_records
from graphs.chat_view import answer_message, main_message_id, tool_turn_message
from graphs.context import Context, effective, model_of
from graphs.length import coverage_instruction
from graphs.runs.offload import prepare_if_cached
from graphs.runs.prefetch import WindowPrefetch
from graphs.runs.progress import report
from graphs.runs.streaming import TokenStream
from graphs.runs.traces import model_call
from graphs.state import State
from graphs.transcript import ask_of, main_calls, setting_of, steps_of, turn_text


def make_main_agent(llm: ChatModel | None):
    async def main_agent(state: State, runtime: Runtime[Context]) -> dict:
        ctx = effective(runtime.context)
        protocol = get_protocol(ctx.protocol)
        run_id, turn = state["run_id"], state["turn"]
        if turn > 0 and protocol.ends_after_calls(turn - 1, ctx):
            return _last_turn_stands(state, run_id)
        forced = protocol.forced(turn, ctx) or state.get("rejected_turn") is not None
        request = protocol.main_request(
            ask_of(state),
            state["overview"],
            duration=state["duration"],
            setting=setting_of(state, ctx),
            steps=steps_of(state, ctx, coverage_instruction(ctx)),
            turn=turn,
            ctx=ctx,
        )
        prefill = request.prefill
        message_id = main_message_id(run_id, len(main_calls(state)))
        prefetch = None
        if protocol.streams and not forced:  # windows decode while the turn is being written
            prefetch = WindowPrefetch(state["video"], state["media"], state["duration"], ctx)
            prefetch.send(prefill or "")
        async with TokenStream(message_id) as stream:

            def on_text(piece: str) -> None:
                stream.send(piece)
                if prefetch is not None:
                    prefetch.send(piece)

            # stream only for a listener or for the prefetch: parsing events costs CPU
            streamed = stream.listening or prefetch is not None
            prepare_if_cached(request)  # frames in memory: no trip to a thread to send them
            model = model_of(runtime.context, llm)
            completion = await model.complete(request, on_text=on_text if streamed else None)
            if not streamed:
                stream.send(completion.text)
        text = with_prefix(completion.text, prefill) if prefill else completion.text
        parsed = parse(text)
        read = protocol.read_turn(
            text, parsed, forced=forced, stopped=completion.finish_reason != "length"
        )
        update: dict = {
            "violations": [{"run_id": run_id, "found": [str(v) for v in parsed.violations]}],
            "model_calls": [model_call(run_id, request, completion)],
        }
        if read.final:
            message = answer_message(
                read.answer,
                state.get("options") or [],
                run_id=run_id,
                turn=turn,
                text=text,
                message_id=message_id,
            )
            return update | {
                "messages": [message],
                "answer": read.answer,
                "final_text": text,
                "final_reply": completion.text,
                "status": "answered" if read.answer else "no_answer",
            }
        info = await asyncio.to_thread(video.probe, state["video"])  # cached: a stat
        try:
            planned = await asyncio.to_thread(protocol.plan_calls, read.calls, info=info, ctx=ctx)
        except EpisodeError as exc:
            return update | _episode_failed(run_id, turn, str(exc), text, completion.text)
        calls = call_records(planned, run_id=run_id, turn=turn)
        running = sum(c["error"] is None for c in calls)
        report("calls", run_id=run_id, turn=turn, in_flight=running, refused=len(calls) - running)
        message = tool_turn_message(parsed, calls, run_id=run_id, text=text, message_id=message_id)
        return update | {"messages": [message], "calls": calls}

    return main_agent


def _last_turn_stands(state: State, run_id: str) -> dict:
    """The protocol's turns are used up after the last turn's calls ran (the release's RL
    loop): that turn is the episode's final text, and no model call is made."""
    calls = main_calls(state)
    text = turn_text(calls[-1])
    answer = parse(text).answer or None
    message = answer_message(
        answer,
        state.get("options") or [],
        run_id=run_id,
        turn=state["turn"],
        text=text,
        message_id=main_message_id(run_id, len(calls)),
    )
    return {
        "messages": [message],
        "answer": answer,
        "final_text": text,
        "final_reply": calls[-1]["completion"]["text"],
        "status": "answered" if answer else "no_answer",
    }


def _episode_failed(run_id: str, turn: int, message: str, text: str, reply: str) -> dict:
    return {
        "messages": [AIMessage(content=message, id=f"{run_id}-failed-{turn}")],
        "answer": None,
        "final_text": text,
        "final_reply": reply,
        "status": "failed",
        "refusal": message,
    }
