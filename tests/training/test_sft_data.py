"""Traces -> SFT rows -> batches: token-level parity with the inference server's prompts."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest

pytest.importorskip("datasets")
torch = pytest.importorskip("torch")

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from agents import prompts  # noqa: E402
from agents.media.video import VideoError  # noqa: E402
from agents.question import Question  # noqa: E402
from graphs.builder import compile_graph  # noqa: E402
from graphs.context import Context  # noqa: E402
from graphs.runs.run import run_question  # noqa: E402
from graphs.runs.traces import call_role  # noqa: E402
from serving.engine import LocalVLM  # noqa: E402
from serving.messages import convert_messages  # noqa: E402
from tests.support.fakes import ScriptedModel, calls  # noqa: E402
from training.collate import IGNORE_INDEX, FramesCollator, to_pil  # noqa: E402
from training.sft_data import (  # noqa: E402
    main_conversations,
    paravt_messages,
    paravt_record,
    paravt_rows,
    to_dataset,
    traces_to_rows,
)

SMALL = dict(overview_frames=4, overview_max_pixels=4096, crop_max_frames=3, crop_max_pixels=4096)
OPTIONS = ["A. red", "B. green", "C. blue", "D. yellow"]
ANSWER = "<think>\nThe notes say red.\n</think>\n\n<answer>A</answer>"


@pytest.fixture(scope="module")
def vlm(tmp_path_factory) -> LocalVLM:
    from serving.tiny_model import build_tiny_model

    return LocalVLM(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0))


@pytest.fixture(scope="module")
def collator(vlm) -> FramesCollator:
    return FramesCollator(vlm.tokenizer, vlm.image_processor)


def run_graph(board, video, context: Context, main=None, question=None) -> dict:
    model = ScriptedModel(
        main=main or [calls((0, 20), (20, 40), think="Look closer."), ANSWER],
        sub=lambda request: "A red circle at 12 seconds.",
    )
    graph = compile_graph(model, board, checkpointer=InMemorySaver())
    result = asyncio.run(
        run_question(
            graph,
            board,
            video_path=video.path,
            question=question or Question("What colour is the shape?", options=tuple(OPTIONS)),
            context=context,
        )
    )
    return result.trace


def server_ids(vlm: LocalVLM, messages, *, prefill: str | None, completion: str | None):
    """(ids of the prompt without the turn, prompt ids, prompt + completion ids), as served."""
    wire = prompts.expand_frames(messages)
    plain, images = convert_messages(wire)
    bare = vlm.build_prompt(plain, images)
    prompt = bare
    if prefill is not None:
        turn, _ = convert_messages([*wire, {"role": "assistant", "content": prefill}])
        prompt = vlm.build_prompt(turn, images, continue_final_message=True)
    generated = vlm.tokenizer(completion + "<|im_end|>", add_special_tokens=False)["input_ids"]
    return bare, prompt, prompt.input_ids + generated


def check_parity(vlm, batch, row_calls) -> None:
    """Every call's served prompt + completion is a prefix of the row's ids, and the loss
    mask is exactly the union of the calls' assistant turns (prefill, text, <|im_end|>)."""
    ids, labels = batch["input_ids"][0].tolist(), batch["labels"][0].tolist()
    expected_mask = [False] * len(ids)
    for call in row_calls:
        bare, prompt, full = server_ids(
            vlm, call["messages"], prefill=call["prefill"], completion=call["completion"]["text"]
        )
        assert ids[: len(full)] == full
        for position in range(len(bare.input_ids), len(full)):
            expected_mask[position] = True
    assert [label != IGNORE_INDEX for label in labels] == expected_mask
    assert all(labels[i] == ids[i] for i in range(len(ids)) if expected_mask[i])
    last = prompt  # the last call's prompt holds every image of the conversation
    assert torch.equal(batch["pixel_values"], last.vision["pixel_values"])
    assert torch.equal(batch["image_grid_thw"], last.vision["image_grid_thw"])
    image_id = vlm.image_token_id
    assert batch["mm_token_type_ids"][0].tolist() == [int(t == image_id) for t in ids]


@pytest.mark.parametrize("tool_result", ["summary", "frames"])
def test_main_agent_rows_tokenize_as_the_server_prompts(
    vlm, collator, board, needle_video, tool_result
):
    trace = run_graph(board, needle_video, Context(**SMALL, tool_result=tool_result))
    main_calls = [c for c in trace["model_calls"] if c["agent"] == "main"]
    assert len(main_calls) == 2 and all(c["prefill"] == "<think>\n" for c in main_calls)
    rows = list(traces_to_rows([trace]))
    assert [r["agent"] for r in rows] == ["main"]  # sub-agents are opt-in
    frames = 4 + (2 * 3 if tool_result == "frames" else 0)
    assert len(rows[0]["images"]) == frames
    check_parity(vlm, collator(rows), main_calls)


def test_subagent_rows_are_their_own_and_match_the_server(vlm, collator, board, needle_video):
    trace = run_graph(board, needle_video, Context(**SMALL))
    rows = list(traces_to_rows([trace], subagents=True))
    assert [r["agent"] for r in rows] == ["main", "sub:0:0", "sub:0:1"]
    sub_calls = [c for c in trace["model_calls"] if call_role(c) == "sub_agent"]
    for row, call in zip(rows[1:], sub_calls, strict=True):
        assert len(row["images"]) == 3
        assert row["messages"][-1]["content"] == [
            {"type": "text", "text": call["completion"]["text"]}
        ]
        batch = collator([row])
        bare, _, full = server_ids(
            vlm, call["messages"], prefill=None, completion=call["completion"]["text"]
        )
        ids, labels = batch["input_ids"][0].tolist(), batch["labels"][0].tolist()
        assert ids[: len(full)] == full
        trained = [i for i, label in enumerate(labels) if label != IGNORE_INDEX]
        assert trained == list(range(len(bare.input_ids), len(full)))


def test_the_prefill_and_the_end_token_carry_loss(vlm, collator, board, needle_video):
    trace = run_graph(board, needle_video, Context(**SMALL), main=[ANSWER])
    batch = collator(list(traces_to_rows([trace])))
    trained = batch["input_ids"][0][batch["labels"][0] != IGNORE_INDEX].tolist()
    assert vlm.tokenizer.decode(trained) == ANSWER + "<|im_end|>"


def test_rows_survive_a_datasets_round_trip(collator, board, needle_video):
    trace = run_graph(board, needle_video, Context(**SMALL, tool_result="frames"))
    rows = list(traces_to_rows([trace], subagents=True))
    dataset = to_dataset(rows)
    assert dataset[0]["images"][0]["bytes"] == rows[0]["images"][0]["bytes"]  # never re-encoded
    from_rows, from_dataset = collator(rows), collator([dataset[i] for i in range(len(rows))])
    assert from_rows.keys() == from_dataset.keys()
    assert all(torch.equal(from_rows[k], from_dataset[k]) for k in from_rows)


def test_traces_are_kept_by_status(board, needle_video):
    trace = run_graph(board, needle_video, Context(**SMALL), main=[ANSWER])
    unanswered = {**trace, "status": "no_answer"}
    assert len(list(traces_to_rows([trace, unanswered]))) == 1
    assert len(list(traces_to_rows([trace, unanswered], statuses=None))) == 2


def test_a_call_that_does_not_extend_the_conversation_starts_a_new_row(board, needle_video):
    trace = run_graph(board, needle_video, Context(**SMALL))
    assert len(main_conversations(trace)) == 1
    edited = copy.deepcopy(trace)
    second = [c for c in edited["model_calls"] if c["agent"] == "main"][1]
    second["messages"][0]["content"] = "A different system prompt."
    first, second_row = main_conversations(edited)
    first_call = edited["model_calls"][0]
    assert first == [
        *first_call["messages"],
        {"role": "assistant", "content": "<think>\n" + first_call["completion"]["text"]},
    ]
    assert second_row[0]["content"] == "A different system prompt."
    assert second_row[-1] == {"role": "assistant", "content": ANSWER}


def write_paravt(path, rows) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), path)


def paravt_row(video_name: str, **info) -> dict:
    question = "<video>\nWhat colour is the shape?\nA. red\nB. green"
    return {
        "prompt": [{"role": "user", "content": question}],
        "videos": [{"video": f"file://{video_name}"}],
        "extra_info": json.dumps({"answer": "A", "question_type": "mcq", **info}),
    }


def test_paravt_rows_render_the_graphs_first_turn(vlm, collator, board, needle_video, tmp_path):
    from pathlib import Path

    from training.sft_data import read_paravt_parquet

    video = Path(needle_video.path)
    write_paravt(tmp_path / "train.parquet", [paravt_row(video.name)])
    raw = read_paravt_parquet(tmp_path / "train.parquet")
    record = paravt_record(raw[0], video_root=video.parent)
    assert record["kind"] == "multiple_choice" and record["answer"] == "A"
    assert record["prompt"] == "What colour is the shape?\nA. red\nB. green"
    context = Context(**SMALL)
    # The graph, given the same prompt, sends the same first request.
    asked = Question(
        "What colour is the shape?", tuple(OPTIONS), kind=record["kind"], prompt=record["prompt"]
    )
    trace = run_graph(board, needle_video, context, main=[ANSWER], question=asked)
    assert paravt_messages(record, context) == trace["model_calls"][0]["messages"]
    (row,) = paravt_rows(raw, video_root=video.parent, context=context)
    target = row["messages"][-1]["content"][0]["text"]
    assert (
        target
        == "<think>\nThe overview frames show enough to answer.\n</think>\n\n<answer>A</answer>"
    )
    batch = collator([row])
    _, _, full = server_ids(
        vlm, trace["model_calls"][0]["messages"], prefill="<think>\n", completion=target[8:]
    )
    newline = vlm.tokenizer("\n", add_special_tokens=False)["input_ids"]
    assert batch["input_ids"][0].tolist() == full + newline  # the template's "\n" after a turn


def test_a_paravt_response_is_the_target_and_bad_rows_are_loud(needle_video, tmp_path):
    from pathlib import Path

    video = Path(needle_video.path)
    row = paravt_row(str(video))
    row["prompt"].append(
        {"role": "assistant", "content": "<think>\nRed.\n</think>\n\n<answer>A</answer>"}
    )
    (out,) = paravt_rows([row], context=Context(**SMALL))
    assert out["messages"][-1]["content"][0]["text"].startswith("<think>\nRed.")
    with pytest.raises(ValueError, match="question_type"):
        paravt_record(paravt_row(str(video), question_type="yesno"))
    with pytest.raises(VideoError):
        paravt_record(paravt_row("missing.mp4"), video_root=tmp_path)


def test_truncation_drops_a_split_image_whole(vlm, collator, board, needle_video):
    trace = run_graph(board, needle_video, Context(**SMALL, tool_result="frames"))
    (row,) = traces_to_rows([trace])
    full = collator.encode(row["messages"], row["images"])
    image_id = vlm.image_token_id
    positions = [i for i, t in enumerate(full.input_ids) if t == image_id]
    per_image = len(positions) // len(row["images"])
    cut = positions[5 * per_image + 1]  # inside the sixth image
    short = FramesCollator(vlm.tokenizer, vlm.image_processor, max_length=cut)
    batch = short([row])
    ids = batch["input_ids"][0].tolist()
    assert len(ids) == positions[5 * per_image] - 1  # before the sixth image's <|vision_start|>
    assert ids.count(image_id) == 5 * per_image
    assert batch["image_grid_thw"].shape[0] == 5
    assert batch["pixel_values"].shape[0] == int(batch["image_grid_thw"].prod(-1).sum())
    vlm.model(**batch)  # the model accepts it: image features and tokens agree


def test_full_sequence_loss_trains_every_text_token(vlm, board, needle_video):
    trace = run_graph(board, needle_video, Context(**SMALL), main=[ANSWER])
    everything = FramesCollator(vlm.tokenizer, vlm.image_processor, assistant_only_loss=False)
    batch = everything(list(traces_to_rows([trace])))
    ids, labels = batch["input_ids"][0], batch["labels"][0]
    assert torch.equal(labels == IGNORE_INDEX, ids == vlm.image_token_id)


def test_batches_pad_on_the_right(vlm, collator, board, needle_video):
    short = run_graph(board, needle_video, Context(**SMALL), main=[ANSWER])
    long = run_graph(board, needle_video, Context(**SMALL))
    rows = [*traces_to_rows([short]), *traces_to_rows([long])]
    batch = collator(rows)
    lengths = batch["attention_mask"].sum(-1).tolist()
    assert lengths[0] < lengths[1] == batch["input_ids"].shape[1]
    pad = batch["input_ids"][0, lengths[0] :]
    assert (pad == vlm.tokenizer.pad_token_id).all()
    assert (batch["labels"][0, lengths[0] :] == IGNORE_INDEX).all()
    assert batch["image_grid_thw"].shape[0] == 4 + 4


def test_to_pil_reads_every_image_form(tmp_path):
    from PIL import Image

    image = Image.new("RGB", (8, 6), (200, 10, 10))
    image.save(tmp_path / "f.png")
    raw = (tmp_path / "f.png").read_bytes()
    forms = [
        image,
        raw,
        {"bytes": raw, "path": None},
        {"bytes": None, "path": str(tmp_path / "f.png")},
        tmp_path / "f.png",
    ]
    for form in forms:
        assert to_pil(form).tobytes() == image.tobytes()
    with pytest.raises(TypeError):
        to_pil(42)
