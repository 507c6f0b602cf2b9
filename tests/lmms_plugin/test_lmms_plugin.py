"""The lmms-eval plugin's logic without lmms-eval: --model_args, reading requests, where the
task's settings and prompt meet the protocol, and answering documents (scripted model).
tests/lmms_plugin/test_lmms_eval_cli.py drives the real lmms-eval command line."""

from __future__ import annotations

import asyncio
import dataclasses
import doctest
import json
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest
from PIL import Image

from graphs.context import Context
from graphs.store.sqlite_board import Board
from lmms_plugin import generation, model_args
from lmms_plugin.docs import DocInput, TaskRefused, read_requests
from lmms_plugin.generation import cut_at_stops, question_of, run_context
from lmms_plugin.model_args import PLUGIN_KEYS, ModelArgsError, parse_model_args
from lmms_plugin.runner import ResumeLog, answer, failures_message, request_key
from tests.support.fakes import ScriptedModel, endpoint_down

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests/fixtures/lmms_eval_task"
ROWS = [json.loads(line) for line in (FIXTURE / "rows.jsonl").read_text().splitlines()]
NANO_REGIME = {
    "default_overview_frames": 4,
    "frame_width": 128,
    "frame_height": 96,
    "max_new_tokens": 256,
    "max_parallel": 4,
}


@pytest.mark.parametrize("module", [generation, model_args])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


# --------------------------------------------------------------------------- --model_args


def test_every_context_knob_is_a_model_args_key_and_takes_lmms_evals_values(tmp_path):
    given = {
        "overview_frames": 64,
        "crop_fps": 1,
        "think_prefix": "false",
        "seed": "None",
        "protocol": "release-eval",
        "prompt_mode": "agentic_general",
        "max_parallel": 5,
        "base_url": "http://127.0.0.1:30000/v1",
        "concurrency": "8",
        "batch_size": 1,
        "device": None,
        "home": str(tmp_path),
    }
    args = parse_model_args(given, env_file=None)
    assert args.knobs == {
        "overview_frames": 64,
        "crop_fps": 1.0,
        "think_prefix": False,
        "seed": None,
        "protocol": "release-eval",
        "prompt_mode": "agentic_general",
        "max_parallel": 5,
    }
    assert isinstance(args.knobs["crop_fps"], float)
    assert (args.base_url, args.concurrency, args.home) == (given["base_url"], 8, tmp_path)
    names = {f.name for f in dataclasses.fields(Context)}
    for name in names:  # each knob is accepted as a key, with its default's own value
        value = getattr(Context(), name)
        assert parse_model_args({name: str(value)}, env_file=None).knobs[name] == value


def test_a_key_that_is_no_knob_is_one_message_listing_every_valid_key():
    with pytest.raises(ModelArgsError) as raised:
        parse_model_args({"overview_frame": 64, "max_turns": -2, "crop_fps": "fast"})
    message = str(raised.value)
    assert message.startswith("paravt --model_args: unknown key 'overview_frame'")
    assert "max_turns=-2 must be at least 0" in message and "crop_fps='fast' is not a number"
    for key in [*PLUGIN_KEYS, *(f.name for f in dataclasses.fields(Context))]:
        assert key in message.split("Valid keys:")[1]
    with pytest.raises(ModelArgsError, match="protocol='release_eval' is not one of paravt"):
        parse_model_args({"protocol": "release_eval"})
    with pytest.raises(ModelArgsError, match="concurrency=0 must be at least 1"):
        parse_model_args({"concurrency": 0})


def test_plugin_settings_come_from_the_environment_unless_model_args_name_them(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("PARAVT_HOME", str(tmp_path / "env-home"))
    monkeypatch.setenv("PARAVT_ENDPOINT", "http://127.0.0.1:1/v1")
    args = parse_model_args({}, env_file=None)
    assert args.home == tmp_path / "env-home" and args.base_url is None  # never the endpoint
    assert parse_model_args({"home": str(tmp_path)}, env_file=None).home == tmp_path


# --------------------------------------------------------------------------- requests


def chat(doc_id, messages, task="t", gen=None, split="test"):
    args = ("ctx", lambda doc: messages, gen or {"max_new_tokens": 16}, doc_id, task, split)
    return SimpleNamespace(args=args, request_type="generate_until", task_name=task)


TASKS = {"t": {"test": [{"q": i} for i in range(4)]}}


def test_chat_messages_give_the_video_and_the_prompt_and_copies_are_counted(tmp_path):
    video = str(FIXTURE / "videos/fx_a.mp4")
    user = [{"type": "video", "url": video}, {"type": "text", "text": "Q?\nA. x\nB. y"}]
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": user},
    ]
    docs = read_requests([chat(2, messages), chat(2, messages), chat(3, messages)], TASKS, tmp_path)
    assert [(d.doc_id, d.repeat) for d in docs] == [(2, 0), (2, 1), (3, 0)]
    assert docs[0].media == video and docs[0].text == "Q?\nA. x\nB. y"
    assert docs[0].system == "Be brief." and docs[0].gen_kwargs == {"max_new_tokens": 16}
    assert docs[0].source == {
        "harness": "lmms-eval",
        "task": "t",
        "split": "test",
        "doc_id": 2,
        "repeat": 0,
    }
    assert docs[0].doc == {"q": 2}


def test_images_given_as_pixels_are_written_once_and_several_make_a_deck(tmp_path):
    red, blue = Image.new("RGB", (8, 6), "red"), Image.new("RGB", (8, 6), "blue")
    one = [
        {
            "role": "user",
            "content": [{"type": "image", "url": red}, {"type": "text", "text": "Colour?"}],
        }
    ]
    two = [
        {
            "role": "user",
            "content": [
                {"type": "image", "url": red},
                {"type": "image", "url": blue},
                {"type": "text", "text": "Which page?"},
            ],
        }
    ]
    tasks = {"t": {"test": [{"q": i, "image": red, "pages": [red, blue]} for i in range(3)]}}
    first, again, deck = read_requests([chat(0, one), chat(1, one), chat(2, two)], tasks, tmp_path)
    assert first.doc == {"q": 0}, "the document's pixels stay with lmms-eval"
    assert first.media == again.media and first.media.endswith(".png")
    assert Image.open(first.media).getpixel((0, 0)) == (255, 0, 0)
    pages = sorted(Path(deck.media).iterdir())
    assert [p.name for p in pages] == ["page_001.png", "page_002.png"]
    assert Image.open(pages[1]).getpixel((0, 0)) == (0, 0, 255)


def test_a_simple_request_reads_doc_to_visual_and_the_context(tmp_path):
    video = str(FIXTURE / "videos/needle.mp4")
    request = SimpleNamespace(
        args=("the context", {"until": ["\n\n"]}, lambda doc: [video], 1, "t", "test"),
        request_type="generate_until",
    )
    [doc] = read_requests([request], TASKS, tmp_path)
    assert (doc.media, doc.text, doc.doc_id) == (video, "the context", 1)


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ([{"type": "text", "text": "Q?"}], "t has no video or image in doc 0"),
        ([{"type": "audio", "url": "a.wav"}, {"type": "text", "text": "Q"}], "t sends audio"),
        ([{"type": "video", "url": "a.mp4"}, {"type": "video", "url": "b.mp4"}], "2 videos"),
        (
            [{"type": "video", "url": {"path": "a.mp4", "video_start": 1, "video_end": 4}}],
            "a clip of its video",
        ),
    ],
)
def test_what_the_graph_cannot_take_is_refused_naming_the_task(tmp_path, content, why):
    messages = [{"role": "user", "content": content}]
    with pytest.raises(TaskRefused, match=why):
        read_requests([chat(0, messages)], TASKS, tmp_path)


def test_a_few_shot_conversation_is_refused(tmp_path):
    messages = [
        {"role": "user", "content": [{"type": "video", "url": "a.mp4"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "B"}]},
    ]
    with pytest.raises(TaskRefused, match="t sends a conversation with assistant turns"):
        read_requests([chat(0, messages)], TASKS, tmp_path)


# --------------------------------------------------------------------------- settings, prompt


def test_model_args_win_over_the_tasks_gen_kwargs_which_win_over_the_regime(caplog):
    gen = {"max_new_tokens": 16, "temperature": 0.2, "until": ["\n\n"]}
    with caplog.at_level(logging.WARNING):
        context = run_context({}, gen, NANO_REGIME, task="videomme")
    assert (context.max_new_tokens, context.temperature, context.overview_frames) == (16, 0.2, 4)
    assert "videomme caps each generation at 16 new tokens" in caplog.text
    context = run_context({"max_new_tokens": 512}, gen, NANO_REGIME, task="videomme")
    assert (context.max_new_tokens, context.temperature) == (512, 0.2)
    assert run_context({}, {}, NANO_REGIME).max_new_tokens == 256
    assert run_context({}, {}, None) == Context()


def test_release_eval_fixes_its_sampling_whatever_the_task_asks(caplog):
    knobs = {"protocol": "release-eval"}
    with caplog.at_level(logging.WARNING):
        context = run_context(knobs, {"temperature": 0.7}, None, task="videomme")
    assert context.temperature == 0.0 and "videomme asks for temperature=0.7" in caplog.text
    with pytest.raises(ValueError, match=r"release-eval fixes crop_fps=1.0 \(--model_args set 2"):
        run_context({**knobs, "crop_fps": 2.0}, {}, None)
    # found where --model_args are read, before lmms-eval loads a task
    with pytest.raises(ModelArgsError, match=r"protocol=release-eval fixes temperature=0.0"):
        parse_model_args({"protocol": "release-eval", "temperature": 0.7})


def doc(task="videomme", text="Q?\nA. a\nB. b", index=0) -> DocInput:
    media = str(FIXTURE / "videos" / f"{ROWS[index]['videoID']}.mp4")
    return DocInput(task, "test", index, 0, text, media, {"until": ["\n\n"]}, None, ROWS[index])


def test_the_tasks_prompt_goes_in_the_question_block_and_its_options_make_it_mc():
    asked = question_of(doc(), "paravt", "agentic_general", None)
    assert (asked.question, asked.options, asked.kind) == (
        "Q?",
        ("A. a", "B. b"),
        "multiple_choice",
    )
    assert asked.prompt == "Q?\nA. a\nB. b"
    assert question_of(doc(text="Describe it."), "paravt", "direct", None).kind == "open_ended"
    assert question_of(doc(text="When?"), "paravt", "direct", "grounding").kind == "grounding"


def test_release_eval_asks_videomme_in_the_releases_words_and_other_tasks_in_theirs():
    released = question_of(doc(), "release-eval", "agentic_general", None).prompt
    assert released.startswith("Question: What colour is the circle that appears in the video?")
    assert "A. A. green" in released  # the release letters Video-MME's options again
    other = question_of(doc(task="some_other_task"), "release-eval", "agentic_general", None)
    assert other.prompt == "Q?\nA. a\nB. b"


def test_until_cuts_the_answer_never_the_reasoning():
    reply = "<think>x\n\ny</think>\n\n<answer>B</answer>\n\nBecause."
    assert cut_at_stops(reply, ["\n\n"]) == "<think>x\n\ny</think>\n\n<answer>B</answer>"
    assert cut_at_stops(reply, ["</answer>", "Because"]) == reply[: reply.index("</answer>")]
    assert cut_at_stops("no reasoning. STOP here", ["STOP"]) == "no reasoning. "
    assert cut_at_stops(reply, []) == reply


# --------------------------------------------------------------------------- answering


def by_video(replies):
    """Main turns by the overview's video (a test's routing; the graph routes on roles)."""

    class Model(ScriptedModel):
        async def complete(self, model_request, *, on_text=None):
            video = next(
                p["video"]
                for m in model_request.messages
                if isinstance(m["content"], list)
                for p in m["content"]
                if p.get("type") == "frames"
            )
            self.main = [replies[Path(video).stem]]
            self._main_turns = 0
            return await super().complete(model_request, on_text=on_text)

    return Model()


def run_answer(docs, tmp_path, model, **knobs):
    args = parse_model_args(
        {
            "home": str(tmp_path),
            "concurrency": 2,
            "dispatch": "none",
            "overview_frames": 2,
            **knobs,
        },
        env_file=None,
    )
    log = ResumeLog(args.home)
    keys = [request_key(args, "scripted", d) for d in docs]
    outcomes = asyncio.run(
        answer(docs, args=args, llm=model, endpoint="http://127.0.0.1:9/v1", log=log, keys=keys)
    )
    return outcomes, log, keys


def test_documents_run_with_their_source_and_a_rerun_finds_them(tmp_path):
    docs = [doc(index=i) for i in range(3)]
    model = by_video(
        {
            "needle": "<think>x</think>\n\n<answer>D</answer>\n\nextra",
            "fx_a": "<think>y</think><answer>B</answer>",
            "fx_c": "<think>z</think><answer>C</answer>",
        }
    )
    outcomes, log, keys = run_answer(docs, tmp_path, model)
    # the final turn as the chat API gives it (after the prefilled "<think>\n"), cut at until
    assert [o.reply for o in outcomes] == [
        "x</think>\n\n<answer>D</answer>",
        "y</think><answer>B</answer>",
        "z</think><answer>C</answer>",
    ]
    board = Board(tmp_path / "board.sqlite")
    for outcome in outcomes:
        assert board.run(outcome.run_id)["source"] == outcome.doc.source
        assert board.trace(outcome.run_id)["source"]["doc_id"] == outcome.doc.doc_id
    found = log.finished(docs, keys)
    assert sorted(found) == [0, 1, 2] and all(o.reused for o in found.values())
    assert [found[i].reply for i in range(3)] == [o.reply for o in outcomes]
    other = request_key(
        parse_model_args({"overview_frames": 8}, env_file=None), "scripted", docs[0]
    )
    assert other != keys[0], "other settings are another request"


def test_a_failing_endpoint_is_reported_per_document_and_never_becomes_a_reply(tmp_path):
    docs = [doc(index=i) for i in range(3)]
    model = by_video(
        {"needle": "<answer>D</answer>", "fx_a": endpoint_down(), "fx_c": "<answer>C</answer>"}
    )
    outcomes, log, keys = run_answer(docs, tmp_path, model)
    assert [o.status for o in outcomes] == ["ok", "error", "ok"]
    assert outcomes[1].reply is None and outcomes[1].error.startswith("endpoint: endpoint down")
    message = failures_message(outcomes, log)
    assert message.startswith("paravt: 1 of 3 documents have no reply")
    assert "videomme doc 1: endpoint: endpoint down" in message and str(log.root) in message
    assert sorted(log.finished(docs, keys)) == [0, 2], "the failed one runs again next time"
    broken = dataclasses.replace(docs[0], media=str(tmp_path / "missing.mp4"))
    [missing], _, _ = run_answer([broken], tmp_path, model)
    assert missing.status == "error" and missing.error.startswith("media: ")


def test_requests_in_flight_stay_within_the_concurrency(tmp_path):
    class Counting(ScriptedModel):
        now = peak = 0

        async def complete(self, model_request, *, on_text=None):
            Counting.now += 1
            Counting.peak = max(Counting.peak, Counting.now)
            try:
                await asyncio.sleep(0.05)
                return await super().complete(model_request, on_text=on_text)
            finally:
                Counting.now -= 1

    docs = [doc(index=i % 3) for i in range(6)]
    docs = [dataclasses.replace(d, doc_id=i) for i, d in enumerate(docs)]
    outcomes, _, _ = run_answer(docs, tmp_path, Counting(main=["<answer>A</answer>"]))
    assert all(o.status == "ok" for o in outcomes) and Counting.peak == 2


def test_a_protocol_that_cannot_serve_the_media_refuses_the_task(tmp_path):
    image = tmp_path / "chart.png"
    Image.new("RGB", (32, 32), "white").save(image)
    still = dataclasses.replace(doc(task="charts"), media=str(image))
    with pytest.raises(TaskRefused, match="charts \\(doc 0\\): --protocol release-eval reads"):
        run_answer(
            [still], tmp_path, ScriptedModel(), protocol="release-eval", prompt_mode="direct"
        )
