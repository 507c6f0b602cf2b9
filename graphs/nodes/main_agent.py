"""The main agent: one model turn that either answers or asks for crop_video windows."""

from __future__ import annotations

from langgraph.runtime import Runtime

from agents.completion import ChatModel, SamplingParams
from agents.main_turn import main_request
from agents.protocol import THINK_PREFIX, parse, with_prefix
from graphs.calls import validate_calls
from graphs.chat_view import answer_message, main_message_id, tool_turn_message
from graphs.context import Context
from graphs.length import coverage_instruction
from graphs.offload import prepare_if_cached
from graphs.prefetch import WindowPrefetch
from graphs.progress import report
from graphs.state import State
from graphs.streaming import TokenStream
from graphs.traces import model_call
from graphs.transcript import ask_of, main_calls, setting_of, steps_of


def make_main_agent(llm: ChatModel):
    async def main_agent(state: State, runtime: Runtime[Context]) -> dict:
        ctx = runtime.context
        run_id, turn = state["run_id"], state["turn"]
        forced = (
            turn >= ctx.max_turns
            or ctx.calls_per_turn == 0
            or state.get("rejected_turn") is not None
        )
        prefill = THINK_PREFIX if ctx.think_prefix else None
        request = main_request(
            ask_of(state),
            state["overview"],
            duration=state["duration"],
            setting=setting_of(state, ctx),
            steps=steps_of(state, ctx, coverage_instruction(ctx)),
            turn=turn,
            prefill=prefill,
            params=SamplingParams(
                temperature=ctx.temperature,
                top_p=ctx.top_p,
                max_tokens=ctx.max_new_tokens,
                seed=ctx.seed,
            ),
        )
        message_id = main_message_id(run_id, len(main_calls(state)))
        prefetch = WindowPrefetch(state["video"], state["media"], state["duration"], ctx)
        prefetch.send(prefill or "")
        async with TokenStream(message_id) as stream:

            def on_text(piece: str) -> None:
                stream.send(piece)
                if not forced:  # windows decode while the turn is still being written
                    prefetch.send(piece)

            # stream only for a listener or for the prefetch: parsing events costs CPU
            streamed = stream.listening or not forced
            prepare_if_cached(request)  # frames in memory: no trip to a thread to send them
            completion = await llm.complete(request, on_text=on_text if streamed else None)
            if not streamed:
                stream.send(completion.text)
        text = with_prefix(completion.text, prefill) if prefill else completion.text
        parsed = parse(text)
        update: dict = {
            "violations": [{"run_id": run_id, "found": [str(v) for v in parsed.violations]}],
            "model_calls": [model_call(run_id, request, completion)],
        }
        if parsed.answer or forced or not parsed.tool_calls:
            message = answer_message(
                parsed.answer,
                state.get("options") or [],
                run_id=run_id,
                turn=turn,
                text=text,
                message_id=message_id,
            )
            return update | {
                "messages": [message],
                "answer": parsed.answer or None,
                "final_text": text,
                "final_reply": completion.text,
                "status": "answered" if parsed.answer else "no_answer",
            }
        calls = validate_calls(
            parsed.tool_calls,
            run_id=run_id,
            turn=turn,
            duration=state["duration"],
            cap=ctx.calls_per_turn,
        )
        running = sum(c["error"] is None for c in calls)
        report("calls", run_id=run_id, turn=turn, in_flight=running, refused=len(calls) - running)
        message = tool_turn_message(parsed, calls, run_id=run_id, text=text, message_id=message_id)
        return update | {"messages": [message], "calls": calls}

    return main_agent
