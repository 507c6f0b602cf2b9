"""A sub-agent's finding becomes a note on the board: who checks it, and how it is written.

The sub-agent posts its own note when there is nothing to check; with the verify gate on it
hands the finding to the gate, which posts the note with its verdict. Either way the note is
written once, as the same row, with the same progress event.
"""

from __future__ import annotations

from graphs.context import Context
from graphs.runs.offload import board_call
from graphs.runs.progress import report
from graphs.state import ToolResult, VerifyTask
from graphs.store.board import BoardStore, Note


def needs_verification(ctx: Context, result: ToolResult) -> bool:
    """Only `verified` board mode checks notes, and only text ones: frames make no claim."""
    return ctx.board_mode == "verified" and result["frames"] is None


async def post_note(board: BoardStore, task: VerifyTask, result: ToolResult) -> None:
    """Write ``result`` as the board's note for its call (`graphs.runs.offload`) and report it."""
    usage = task["usage"]
    note = Note(
        run_id=task["run_id"],
        key=f"t{result['turn']}c{result['index']}",
        author="sub_agent",
        turn=result["turn"],
        call_index=result["index"],
        start=result["start"],
        end=result["end"],
        frames=list(result["timestamps"]),
        content=result["content"],
        verdict=result["verdict"],
        prompt_tokens=usage["prompt_tokens"],
        completion_tokens=usage["completion_tokens"],
        latency_s=usage["latency_s"],
    )
    await board_call(board, board.add_note, note)
    report(
        "note",
        run_id=task["run_id"],
        turn=result["turn"],
        call=result["index"],
        start=result["start"],
        end=result["end"],
        verdict=result["verdict"],
        note=result["content"],
    )
