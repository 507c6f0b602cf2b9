"""The engine-level AReaL workflow against a fake engine with AReaL's own request and response
fields (areal/api/io_struct.py at v1.0.4): ids in and out exactly, masks, log-probs, versions,
frames, and the reward; the subclassing of AReaL's RolloutWorkflow only where AReaL is
installed."""

from __future__ import annotations

import asyncio
import base64
import importlib
import inspect
import io
import pickle
import sys
import types
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from PIL import Image  # noqa: E402

from graphs.context import Context  # noqa: E402
from graphs.store.sqlite_board import Board  # noqa: E402
from serving.engine import ensure_tiny_model  # noqa: E402
from tests.support.areal import CALLS, data_of  # noqa: E402
from training.areal import engine as areal_engine  # noqa: E402
from training.para_grpo import ParaGRPOConfig  # noqa: E402


@dataclass
class GenerationHyperparameters:  # AReaL's fields that the workflow sets
    n_samples: int = 1
    max_new_tokens: int = 16
    greedy: bool = False
    top_p: float = 1.0
    top_k: int = -1
    temperature: float = 1.0

    def new(self, **kwargs):
        return replace(self, **kwargs)


@dataclass
class ModelRequest:  # areal.api.io_struct.ModelRequest (1.0.4), field for field
    rid: str = ""
    input_ids: list[int] = field(default_factory=list)
    gconfig: GenerationHyperparameters = field(default_factory=GenerationHyperparameters)
    metadata: dict[str, Any] = field(default_factory=dict)
    tokenizer: Any = None
    image_data: list[str] | None = field(default_factory=list)
    processor: Any = None
    vision_msg_vllm: list | None = None


@dataclass
class ModelResponse:  # areal.api.io_struct.ModelResponse (1.0.4), the fields the workflow reads
    input_tokens: list[int] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    output_logprobs: list[float] = field(default_factory=list)
    output_versions: list[int] = field(default_factory=list)
    stop_reason: str = "stop"


class FakeEngine:
    """Writes two crop calls, then a note per window, then an answer: by call order, as an
    engine sees only ids. Every token gets log-prob -0.01 * its position, version 7."""

    def __init__(self, tokenizer, answer: str) -> None:
        self.tokenizer, self.answer = tokenizer, answer
        self.requests: list[ModelRequest] = []
        self.responses: list[ModelResponse] = []
        self.end = tokenizer.convert_tokens_to_ids("<|im_end|>")

    async def agenerate(self, req: ModelRequest) -> ModelResponse:
        self.requests.append(req)
        n = len(self.requests)
        await asyncio.sleep(0)
        text = CALLS if n == 1 else "A red square." if n <= 3 else "It is red.\n</think>\n"
        if n > 3:
            text += f"<answer>{self.answer}</answer>"
        ids = [*self.tokenizer(text, add_special_tokens=False)["input_ids"], self.end]
        response = ModelResponse(
            req.input_ids, ids, [-0.01 * k for k in range(len(ids))], [7] * len(ids)
        )
        self.responses.append(response)
        return response


SMALL = Context(
    overview_max_pixels=4096,
    crop_max_frames=2,
    crop_max_pixels=4096,
    summary_max_tokens=16,
    max_turns=1,
    max_parallel=2,
)


def run(renderer, prompt, tmp_path, answer, **algo):
    engine = FakeEngine(renderer.tokenizer, answer)
    board = Board(tmp_path / "board.sqlite")
    end = renderer.tokenizer.convert_tokens_to_ids("<|im_end|>")
    workflow = areal_engine.ParaVTEngineWorkflow(
        renderer,
        GenerationHyperparameters(),
        ModelRequest,
        board,
        algo=ParaGRPOConfig(frame_choices=(2,), full_frames=2, **algo),
        context=SMALL,
        end_ids=[end],
    )
    try:
        batch = asyncio.run(workflow.arun_episode(engine, data_of(prompt)))
    finally:
        board.close()
    return batch, engine


def test_an_episode_is_the_engine_s_own_ids_with_tool_responses_masked(renderer, prompt, tmp_path):
    batch, engine = run(renderer, prompt, tmp_path, prompt.target)
    assert len(engine.requests) == 4 and batch["input_ids"].shape[0] == 1  # one chained row
    first, last = engine.requests[0], engine.requests[-1]
    ids, mask = batch["input_ids"][0].tolist(), batch["loss_mask"][0].tolist()
    assert ids[: len(first.input_ids)] == first.input_ids  # the first prompt, untouched
    assert ids[: len(last.input_ids)] == last.input_ids  # the last turn's prompt extends it
    mains = [engine.responses[0], engine.responses[-1]]
    sampled = [t for i, t in enumerate(ids) if mask[i]]
    assert sampled == [t for r in mains for t in r.output_tokens]  # the engine's ids, in order
    between = renderer.tokenizer.decode(
        [t for i, t in enumerate(ids) if not mask[i] and i >= len(first.input_ids)]
    )
    assert "<tool_response>" in between and "A red square." in between  # notes: never trained
    logps = batch["logprobs"][0][batch["loss_mask"][0].bool()].tolist()
    assert logps == pytest.approx([lp for r in mains for lp in r.output_logprobs])
    versions = batch["versions"][0].tolist()
    assert all((v == 7) == bool(m) for v, m in zip(versions, mask, strict=True))
    assert batch["attention_mask"].all() and batch["rewards"].shape == (1,)


def test_the_frames_go_to_the_engine_and_into_the_sample(renderer, prompt, tmp_path):
    batch, engine = run(renderer, prompt, tmp_path, prompt.target)
    main = engine.requests[0]
    images = [Image.open(io.BytesIO(base64.b64decode(b))) for b in main.image_data]
    assert len(images) == 2 and all(im.format == "PNG" for im in images)  # 2 overview frames
    grid = batch["multi_modal_input"][0]["image_grid_thw"]
    tokens = batch["mm_token_type_ids"][0]
    placeholders = int((batch["input_ids"][0] == renderer.image_token_id).sum())
    assert int(tokens.sum()) == placeholders == int(grid.prod(dim=1).sum()) // 4
    assert main.gconfig.n_samples == 1 and main.gconfig.temperature == 0.7


def test_the_reward_is_the_episode_s_and_a_wrong_answer_earns_less(renderer, prompt, tmp_path):
    right, _ = run(renderer, prompt, tmp_path / "right", prompt.target)
    wrong_letter = next(o[0] for o in prompt.options if o[0] != prompt.target)
    wrong, _ = run(renderer, prompt, tmp_path / "wrong", wrong_letter)
    # R_acc alone separates them by 1 (R_tool pays more for a right answer too)
    assert float(right["rewards"][0]) - float(wrong["rewards"][0]) >= 1.0


def test_sub_agent_rows_join_only_when_asked(renderer, prompt, tmp_path):
    batch, engine = run(renderer, prompt, tmp_path, prompt.target, train_subagents=True)
    assert batch["input_ids"].shape[0] == 3  # the main row and one row per note
    for row in (1, 2):
        n = int(batch["attention_mask"][row].sum())
        prompt_ids = batch["input_ids"][row][:n][batch["loss_mask"][row][:n] == 0].tolist()
        assert any(prompt_ids == r.input_ids for r in engine.requests[1:3])
        assert (batch["versions"][row][:n][batch["loss_mask"][row][:n].bool()] == 7).all()
    assert (batch["rewards"] == batch["rewards"][0]).all()


def test_areal_builds_it_from_workflow_kwargs_and_runs_it(renderer, prompt, tmp_path, monkeypatch):
    class RolloutWorkflow:  # stands in for areal.api.workflow_api.RolloutWorkflow
        async def arun_episode(self, engine, data): ...

    modules = {
        name: types.ModuleType(name)
        for name in ("areal", "areal.api", "areal.api.io_struct", "areal.api.workflow_api")
    }
    modules["areal.api.io_struct"].ModelRequest = ModelRequest
    modules["areal.api.workflow_api"].RolloutWorkflow = RolloutWorkflow
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delitem(vars(areal_engine), "ParaVTRolloutWorkflow", raising=False)
    model = str(ensure_tiny_model(seed=0))
    monkeypatch.setattr("transformers.AutoProcessor.from_pretrained", lambda path: path)
    cls = importlib.import_module("training.areal.engine").ParaVTRolloutWorkflow
    assert issubclass(cls, RolloutWorkflow) and areal_engine.WORKFLOW.endswith(cls.__name__)
    kwargs = {
        "gconfig": GenerationHyperparameters(),
        "tokenizer": model,
        "processor": model,
        "board_path": str(tmp_path / "board.sqlite"),
        "video_root": None,
        "grpo": {"frame_choices": [2], "full_frames": 2},
        "context": {
            "overview_max_pixels": 4096,
            "crop_max_frames": 2,
            "crop_max_pixels": 4096,
            "summary_max_tokens": 16,
            "max_turns": 1,
            "max_parallel": 2,
        },
    }
    workflow = cls(**pickle.loads(pickle.dumps(kwargs)))  # what a rollout worker receives
    engine = FakeEngine(renderer.tokenizer, prompt.target)
    try:
        batch = asyncio.run(workflow.arun_episode(engine, data_of(prompt)))
    finally:
        workflow.board.close()
    assert engine.requests[0].processor == model and len(engine.requests) == 4
    assert batch["input_ids"].shape[0] == 1 and batch["rewards"].shape == (1,)
    ours = inspect.signature(areal_engine.ParaVTEngineWorkflow.arun_episode)
    assert list(ours.parameters) == ["self", "engine", "data"]  # RolloutWorkflow's (1.0.4, 2.0)
