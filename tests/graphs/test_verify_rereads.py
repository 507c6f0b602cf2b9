"""The verify gate reads a window again, from the frames between the first ones, before it
withholds a note it did not support."""

from __future__ import annotations

import pytest

from agents.media.sampling import between_times
from tests.graphs.test_gates import ask, frame_times, last_tool_text
from tests.support.fakes import ScriptedModel, calls

ANSWER = "<think>x</think><answer>A</answer>"


def by_first_frame(request) -> str:
    return f"note from frame {frame_times(request)[0]:g}"


def supports_only(*notes: str):
    return lambda request: "SUPPORTED" if any(n in request.text() for n in notes) else "UNSUPPORTED"


async def test_a_rejected_note_is_read_again_from_the_frames_between(needle_video, board):
    model = ScriptedModel(
        main=[calls((0, 10)), ANSWER], sub=by_first_frame, verify=supports_only("frame 2.5")
    )
    result = await ask(model, board, needle_video, board_mode="verified")
    first, again = model.sub_requests
    assert frame_times(first) == [1.25, 3.75, 6.25, 8.75]
    assert frame_times(again) == between_times(frame_times(first), 10.0) == [2.5, 5, 7.5, 9.375]
    assert "note from frame 2.5" in last_tool_text(model, 1)
    (note,) = board.notes(result.run_id)
    assert (note.content, note.verdict, note.frames) == (
        "note from frame 2.5",
        "SUPPORTED",
        [2.5, 5, 7.5, 9.375],
    )
    assert (note.start, note.end) == (0.0, 10.0), "the note keeps the window the call asked for"
    checks = model.verify_requests
    assert [c.request.call_index for c in checks] == [0, 0] and len(checks) == 2
    assert frame_times(checks[1]) == [2.5, 5, 7.5, 9.375]  # no span cited: the whole look


async def test_a_note_unsupported_on_both_looks_is_withheld(needle_video, board):
    model = ScriptedModel(main=[calls((0, 10)), ANSWER], sub=by_first_frame, verify=supports_only())
    result = await ask(model, board, needle_video, board_mode="verified")
    assert len(model.sub_requests) == 2 and len(model.verify_requests) == 2
    assert "No verified finding" in last_tool_text(model, 1)
    (note,) = board.notes(result.run_id)
    assert note.verdict == "UNSUPPORTED" and note.content == "note from frame 2.5"
    assert result.trace["cost"]["model_calls"] == 2 + 2 + 2  # main turns, looks, checks
    looks = [c for c in result.trace["model_calls"] if c["role"] == "sub_agent"]
    assert note.prompt_tokens == sum(c["completion"]["usage"]["prompt_tokens"] for c in looks)


@pytest.mark.parametrize(("rereads", "looks"), [(0, 1), (2, 3)])
async def test_rereads_set_how_many_looks_a_window_gets(needle_video, board, rereads, looks):
    model = ScriptedModel(main=[calls((0, 10)), ANSWER], sub=by_first_frame, verify=supports_only())
    await ask(model, board, needle_video, board_mode="verified", verify_rereads=rereads)
    assert len(model.sub_requests) == looks and len(model.verify_requests) == looks
    seen = [t for r in model.sub_requests for t in frame_times(r)]
    assert len(seen) == len(set(seen)) == 4 * looks, "no look sees another look's frames"


async def test_a_supported_note_is_read_once(needle_video, board):
    model = ScriptedModel(main=[calls((0, 10)), ANSWER], sub=by_first_frame)
    await ask(model, board, needle_video, board_mode="verified", verify_rereads=3)
    assert len(model.sub_requests) == 1 and len(model.verify_requests) == 1


async def test_a_note_that_names_only_times_outside_its_window_is_not_sent_to_a_check(
    needle_video, board
):
    def elsewhere(request):
        t = frame_times(request)[0]
        return f"Seen: red circle from {t + 30:g} to {t + 35:g} seconds; the circle is red."

    model = ScriptedModel(main=[calls((0, 10)), ANSWER], sub=elsewhere)
    result = await ask(model, board, needle_video, board_mode="verified")
    assert len(model.sub_requests) == 2 and model.verify_requests == []
    (note,) = board.notes(result.run_id)
    assert note.verdict == "UNSUPPORTED" and "No verified finding" in last_tool_text(model, 1)
