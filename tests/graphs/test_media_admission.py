"""One path-admission rule for every way a video reaches a LangGraph server, tested through
`langgraph dev` with the LangGraph SDK: chat text, the ``video`` field, the older ``video`` +
``question`` input and ``Context.default_video`` open only files under the media roots once
symlinks are resolved, and a path outside gets the same words whether a file is there or not
(issue 36: the ``video`` field used to open any absolute path, and the wording told a client
which files exist)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from graphs.store.sqlite_board import Board
from testing.scripted import ScriptedServer
from tests.support.studio import langgraph_dev, reply

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory, needle_video):
    """`langgraph dev` with one media root holding a video, a symlink out of the root to a
    file that exists, and one to a file that does not."""
    home = tmp_path_factory.mktemp("admission")
    media = home / "media"
    media.mkdir()
    shutil.copy(needle_video.path, media / "inside.mp4")
    outside = Path(needle_video.path)  # exists, readable, outside the root
    os.symlink(outside, media / "link.mp4")
    os.symlink(home / "nowhere" / "gone.mp4", media / "dangling.mp4")
    with (
        ScriptedServer(reply) as model_server,
        langgraph_dev(home, model_server.base_url, media) as (url, _),
    ):
        yield get_sync_client(url=url, timeout=120), model_server, home, outside


def ask(client, run_input: dict, context: dict | None = None) -> dict:
    thread = client.threads.create()
    return client.runs.wait(thread["thread_id"], "paravt", input=run_input, context=context)


def said(values: dict, path: str) -> str:
    """The graph's last word in the chat, with the path it names written as PATH."""
    return values["messages"][-1]["content"].replace(path, "PATH")


def test_every_input_refuses_a_path_outside_the_roots_in_the_same_words(server):
    client, model_server, home, outside = server
    missing = str(home.parent / "no-such-dir" / "secret.mp4")
    ways = {
        "chat text": lambda p: ({"messages": [{"type": "human", "content": f"{p} Colour?"}]}, None),
        "video field": lambda p: (
            {"video": p, "messages": [{"type": "human", "content": "Colour?"}]},
            None,
        ),
        "older input": lambda p: ({"video": p, "question": "Colour?"}, None),
        "default_video": lambda p: (
            {"messages": [{"type": "human", "content": "Colour?"}]},
            {"default_video": p},
        ),
    }
    words = set()
    for way, build in ways.items():
        seen = {}
        for name, path in (("exists", str(outside)), ("missing", missing)):
            values = ask(client, *build(path))
            assert values["status"] == "failed", (way, name, values)
            seen[name] = said(values, path)
        assert seen["exists"] == seen["missing"], way  # nothing told about the file
        assert "outside the media roots" in seen["exists"], seen
        words.add(seen["exists"])
    assert len(words) == 1, words  # one rule, one wording, whichever way the path came
    assert model_server.requests == []  # nothing was run
    assert Board(home / "board.sqlite").runs() == []


def test_symlinks_are_resolved_before_the_rule_applies(server):
    client, model_server, _, _ = server
    replies = {}
    for link in ("link.mp4", "dangling.mp4", "../admission0/media/../../x.mp4"):
        values = ask(client, {"messages": [{"type": "human", "content": f"{link} Colour?"}]})
        assert values["status"] == "failed"
        replies[link] = said(values, link)
    assert len(set(replies.values())) == 1 and "outside the media roots" in replies["link.mp4"]
    assert model_server.requests == []


def test_a_video_under_the_root_runs_by_any_input(server):
    client, _, home, _ = server
    inside = str(home / "media" / "inside.mp4")
    chat = ask(client, {"messages": [{"type": "human", "content": "inside.mp4 Colour?"}]})
    field = ask(client, {"video": inside, "question": "Colour?"})
    assert chat["status"] == field["status"] == "answered"
    assert {Path(r["video"]).name for r in Board(home / "board.sqlite").runs()} == {"inside.mp4"}
