"""The verify gate's request: the frames a note cites, cut together with their keyframe times."""

from __future__ import annotations

from agents.verify import cited_part, verify_messages

KEYFRAMES = {
    "type": "frames",
    "video": "v.mp4",
    "timestamps": [89.0, 94.0, 99.0, 104.0],
    "max_pixels": 4096,
    "sampling": "keyframe",
    "requested": [88.6, 93.8, 99.1, 104.2],
    "errors": [0.4, 0.2, -0.1, -0.2],
}


def test_every_list_that_runs_frame_by_frame_is_cut_alike():
    part = cited_part(KEYFRAMES, "Seen: red cross from 94 to 104 seconds; the cross is red.")
    assert part["timestamps"] == [94.0, 99.0]
    assert part["requested"] == [93.8, 99.1] and part["errors"] == [0.2, -0.1]
    assert {k: v for k, v in part.items() if k not in ("timestamps", "requested", "errors")} == {
        k: v for k, v in KEYFRAMES.items() if k not in ("timestamps", "requested", "errors")
    }
    assert KEYFRAMES["timestamps"] == [89.0, 94.0, 99.0, 104.0], "the window's part is not changed"


def test_a_note_without_a_span_in_the_window_is_checked_on_the_whole_window():
    for note in ("A man talks.", "Seen: red cross from 300 to 305 seconds.", "No coloured shapes."):
        assert cited_part(KEYFRAMES, note) == KEYFRAMES


def test_the_request_carries_the_cut_part_and_the_whole_note():
    note = "Seen: blue circle from 99 to 104 seconds; the circle is blue."
    _, user = verify_messages(KEYFRAMES, question="What colour is the circle?", claim=note)
    frames, text = user["content"]
    assert frames["timestamps"] == [99.0]
    assert note in text["text"]
