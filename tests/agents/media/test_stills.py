"""Still media through the graph: a deck is one page per second, an image's window is a band."""

from __future__ import annotations

import base64

import cv2
import numpy as np
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.media import stills, video
from agents.media.video import VideoError
from agents.question import Question
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from tests.support.fakes import ScriptedModel, calls

BGR = {"red": (0, 0, 255), "green": (0, 200, 0), "blue": (255, 0, 0)}


def page(path, colour, size=(200, 150)):
    cv2.imwrite(str(path), np.full((size[1], size[0], 3), BGR[colour], np.uint8))


@pytest.fixture
def deck(tmp_path):
    folder = tmp_path / "deck"
    folder.mkdir()
    for name, colour in (("page_1.png", "red"), ("page_2.png", "green"), ("page_10.png", "blue")):
        page(folder / name, colour)
    (folder / "notes.txt").write_text("not a page")
    return folder


@pytest.fixture
def split_image(tmp_path):
    image = np.zeros((400, 300, 3), np.uint8)
    image[:200] = BGR["red"]
    image[200:] = BGR["blue"]
    path = tmp_path / "chart.png"
    cv2.imwrite(str(path), image)
    return path


def mean_bgr(jpeg: bytes) -> np.ndarray:
    return cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR).reshape(-1, 3).mean(0)


def request_images(request) -> list[np.ndarray]:
    return [
        mean_bgr(base64.b64decode(p["image_url"]["url"].split(",", 1)[1]))
        for m in request.wire()
        if isinstance(m["content"], list)
        for p in m["content"]
        if p.get("type") == "image_url"
    ]


def test_a_deck_is_one_page_per_second_in_natural_order(deck):
    info = video.probe(deck)
    assert (info.duration, info.codec) == (3.0, "pages")
    assert [p.name for p in stills.deck_pages(deck)] == ["page_1.png", "page_2.png", "page_10.png"]
    frames = video.decode_frames(deck, [2.5, 0.5, 1.2])
    colours = [int(np.argmax(mean_bgr(f.jpeg))) for f in frames]
    assert colours == [0, 2, 1]  # blue, red, green channels of BGR
    assert video.frame_label(info, frames[0].timestamp) == "<page 3>"


def test_an_image_band_is_decoded_at_the_full_budget(split_image):
    (top,) = video.decode_frames(split_image, [0.0], max_pixels=10_000, region=(0.0, 0.5))
    (bottom,) = video.decode_frames(split_image, [0.0], max_pixels=10_000, region=(0.5, 1.0))
    assert np.argmax(mean_bgr(top.jpeg)) == 2 and np.argmax(mean_bgr(bottom.jpeg)) == 0
    assert top.width * top.height <= 10_000 and top.width > top.height  # a wide band
    info = video.probe(split_image)
    assert video.frame_label(info, 0.0, (0.5, 1.0)) == "<image, rows 50% to 100% of its height>"


async def ask(model, board, path, question: str, **context):
    graph = compile_graph(model, board, checkpointer=InMemorySaver())
    return await run_question(
        graph, board, video_path=str(path), question=Question(question), context=Context(**context)
    )


async def test_a_deck_runs_with_page_windows(deck, board):
    model = ScriptedModel(main=[calls((1, 3)), "<think>x</think><answer>A</answer>"])
    result = await ask(model, board, deck, "What colour?", overview_frames=16)
    assert result.trace["overview"]["timestamps"] == [0.5, 1.5, 2.5]
    assert "page k spans seconds k-1 to k" in model.main_requests[0].messages[0]["content"]
    (sub,) = model.sub_requests
    assert "pages 2 to 3 of a document" in sub.text()
    assert "<page 2>" in sub.text() and "<page 3>" in sub.text()
    assert [int(np.argmax(c)) for c in request_images(sub)] == [1, 0]  # green, blue


async def test_an_image_window_is_a_band_for_the_subagent_and_the_verifier(split_image, board):
    model = ScriptedModel(main=[calls((0.5, 1.0)), "<think>x</think><answer>A</answer>"])
    result = await ask(model, board, split_image, "Colour?", board_mode="verified")
    assert result.status == "answered"
    assert "fractions of its height" in model.main_requests[0].messages[0]["content"]
    (sub,) = model.sub_requests
    (verify,) = model.verify_requests
    for request in (sub, verify):
        (colour,) = request_images(request)
        assert np.argmax(colour) == 0, "the bottom band is blue"
    assert "band from 50% to 100%" in sub.text()


async def test_a_rejected_image_band_gets_no_second_look(split_image, board):
    """A band is one frame: there are no frames between, so the gate withholds at once."""
    model = ScriptedModel(
        main=[calls((0.5, 1.0)), "<think>x</think><answer>A</answer>"],
        verify=lambda request: "UNSUPPORTED",
    )
    result = await ask(
        model, board, split_image, "Colour?", board_mode="verified", verify_rereads=2
    )
    assert len(model.sub_requests) == 1 and len(model.verify_requests) == 1
    assert board.notes(result.run_id)[0].verdict == "UNSUPPORTED"


def test_a_folder_of_unreadable_pages_is_a_clear_error(tmp_path):
    (tmp_path / "page_1.png").write_bytes(b"not an image")
    with pytest.raises(VideoError, match=r"page_1\.png cannot be read as an image"):
        video.probe(tmp_path)
