"""The live display of `app.py run`: each main turn and each note, whichever node posted it."""

from __future__ import annotations

import io

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from rich.console import Console

from agents.question import Question
from cli.report import RunDisplay
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from tests.support.fakes import ScriptedModel, calls

SMALL = dict(overview_frames=4, overview_max_pixels=4096, crop_max_frames=4, crop_max_pixels=4096)


@pytest.mark.parametrize("board_mode", ["isolated", "verified"])
async def test_turns_and_notes_are_shown_as_they_land(needle_video, board, board_mode):
    model = ScriptedModel(
        main=[
            calls((0, 30), (30, 60)),
            "<think>The helper saw [bold]red.</think><answer>A</answer>",
        ],
        sub=lambda request: "a red circle at 12 seconds",
    )
    out = io.StringIO()
    display = RunDisplay(Console(file=out, width=200))
    graph = compile_graph(model, board, checkpointer=InMemorySaver())
    result = await run_question(
        graph,
        board,
        video_path=needle_video.path,
        question=Question("Colour?"),
        context=Context(**SMALL, board_mode=board_mode),
        on_update=display,
    )
    assert result.status == "answered"
    lines = out.getvalue().splitlines()
    shown = [line.split(":")[0].split(" (")[0] for line in lines]
    assert shown[:4] == [
        "overview 4 frames at 7.5, 22.5, 37.5, 52.5 s of a 60 s video",
        "main agent turn 0",
        "  think",
        "  2 parallel crop_video calls",
    ]
    assert sorted(shown[4:6]) == ["sub-agent #0 0-30 s", "sub-agent #1 30-60 s"]  # as they land
    assert shown[6:] == ["main agent turn 1", "  think", "  answered"]
    verdict = " [SUPPORTED]" if board_mode == "verified" else ""
    assert all(f"){verdict}: a red circle at 12 seconds" in line for line in lines[4:6])
    assert "  think: The helper saw [bold]red." in lines  # model text is never markup
    assert lines[-1] == "  answered: 'A'"


@pytest.mark.parametrize("colour", [False, True])
def test_a_note_is_one_line_coloured_only_on_a_colour_terminal_and_never_with_control_codes(
    colour,
):
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=colour, color_system="standard")
    display = RunDisplay(console if colour else Console(file=out, width=200))
    result = {
        "turn": 0,
        "index": 2,
        "start": 10.0,
        "end": 20.0,
        "timestamps": [10.0, 15.0],
        "verdict": None,
        "content": "a red\r circle\x07 [cyan]x[/cyan]\tend",
    }
    display("sub_agent", {"model_calls": [], "tool_results": [result]})
    label = "\x1b[36msub-agent\x1b[0m" if colour else "sub-agent"
    assert out.getvalue() == f"{label} #2 10-20 s (2 frames): a red circle [cyan]x[/cyan]\tend\n"
