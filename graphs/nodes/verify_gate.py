"""The verify gate: the same model checks a note against its frames before it is written.

Only `verified` board mode routes text findings here (`graphs.notes.needs_verification`);
otherwise a sub-agent posts its own note and the run skips this node.

A note the gate does not support is not withheld at once: the window is read again from the
frames between the first ones (`agents.media.sampling.between_times`), up to
`verify_rereads` times (look k of n a k/n share of the way from each first frame to the
next, so no look sees another's frames), and the new note is checked the same way. A
misread that comes from the frames a look happened to sample, or from a model that reads
wrong now and then, then costs one more read of that window instead of its finding; a note
the model cannot support from either set of frames is withheld.

A note whose every span lies outside its window is UNSUPPORTED without a check: the window's
frames cannot show it (`agents.verify.outside_window`), and a check shown the whole window
would judge only its colour and shape. (A second look at the window moved by half a frame
step, sampled the usual way, did worse with paravt-nano: docs/nano.md.)
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from agents import prompts
from agents.client.completion import ChatModel
from agents.media.sampling import between_times
from agents.media.stills import IMAGE, PAGES
from agents.sub_turn import Window, verifier_request
from agents.verify import outside_window, parse_verdict
from graphs.context import Context, effective, model_of
from graphs.nodes.sub_agent import read_window
from graphs.notes import needs_verification, post_note
from graphs.runs.traces import model_call
from graphs.state import ModelCall, ToolResult, VerifyTask
from graphs.store.board import BoardStore

STILL_MEDIA = (IMAGE, PAGES)  # one frame per band or page: nothing lies between them


def make_verify_gate(llm: ChatModel | None, board: BoardStore):
    async def check(
        model: ChatModel, task: VerifyTask, window: Window, result: ToolResult, ctx: Context
    ) -> tuple[str, ModelCall | None]:
        if task["media"] not in STILL_MEDIA and outside_window(
            result["content"], window.start, window.end
        ):
            return "UNSUPPORTED", None  # it names only times this window does not hold
        frames = prompts.frames_part(
            task["video"], result["timestamps"], ctx.crop_max_pixels, result.get("region")
        )
        request = verifier_request(
            window, frames, question=task["question"], claim=result["content"]
        )
        completion = await model.complete(request)
        verdict, _ = parse_verdict(completion.text)
        return verdict, model_call(task["run_id"], request, completion)

    async def verify_gate(task: VerifyTask, runtime: Runtime[Context]) -> dict:
        ctx = effective(runtime.context)
        result = dict(task["result"])
        usage = dict(task["usage"])
        model_calls: list[ModelCall] = []
        # true for every finding routed here, except one a thread saved by an older graph
        # (which sent every note through this gate) resumes with: that one is written as is
        if needs_verification(ctx, result):
            model = model_of(runtime.context, llm)
            window = Window(
                task["video"],
                task["media"],
                result["start"],
                result["end"],
                result["turn"],
                result["index"],
            )
            rereads = 0 if task["media"] in STILL_MEDIA else ctx.verify_rereads
            first = result["timestamps"]
            for read in range(rereads + 1):
                if read:  # each look a further share of the way between the first's frames
                    times = between_times(first, window.end, read / (rereads + 1))
                    frames = prompts.frames_part(
                        window.video, times, ctx.crop_max_pixels, result.get("region")
                    )
                    content, more, calls = await read_window(
                        model,
                        ctx,
                        window,
                        frames,
                        run_id=task["run_id"],
                        question=task["question"],
                        board=task.get("board", []),
                    )
                    result.update(timestamps=list(frames["timestamps"]), content=content)
                    usage = {k: usage[k] + more[k] for k in usage}
                    model_calls += calls
                result["verdict"], call = await check(model, task, window, result, ctx)
                model_calls += [call] if call else []
                if result["verdict"] == "SUPPORTED":
                    break
        await post_note(board, {**task, "usage": usage}, result)
        return {"tool_results": [result], "model_calls": model_calls}

    return verify_gate
