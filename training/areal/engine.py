"""PARA-GRPO on AReaL as the ParaVT release ran it: an engine-level ``RolloutWorkflow``.

The release's ``HierarchicalAgentWorkflow`` (paravt/rl/workflow.py) calls
``engine.agenerate(ModelRequest(input_ids, image_data, ...))`` for every model call and builds
its trajectory from the token ids and log-probs that come back; it does not use AReaL's OpenAI
proxy. :class:`ParaVTEngineWorkflow` does the same with this project's graph:

- every model call of an episode goes through ``training.trl.rollout.PolicyChatModel``, which
  renders the request exactly as the server does (``serving.engine.ChatRenderer``: the
  checkpoint's chat template, the Think Prefix as a continued assistant message) and hands the
  ids to :class:`EngineBackend`: one ``agenerate`` per call, the frames as PNG base64
  ``image_data`` (as AReaL's ``image2base64`` sends them), nothing retokenised;
- the episode becomes rows as under TRL (``trl_rollout.episode_rows``: main-agent turns chained
  where the next prompt extends the sequence, ``loss_mask`` 0 on tool responses, sub-agent rows
  only with ``train_subagents``); each row is one AReaL sample in the layout of AReaL 1.0.4's
  ``VisionRLVRWorkflow`` (input_ids, mm_token_type_ids, loss_mask, logprobs, versions,
  attention_mask, rewards, multi_modal_input), rows of an episode padded to one length;
- the reward is ``para_grpo.trace_reward``'s R for the whole episode; AReaL normalises it per
  group.

Checked against AReaL 1.0.4 and 2.0.0 (``areal.api.workflow_api.RolloutWorkflow.arun_episode
(engine, data)``, ``areal.api.io_struct.ModelRequest`` / ``ModelResponse``). AReaL is imported
only by :func:`workflow_class`; the rest runs (and is tested) without it.
"""

from __future__ import annotations

import asyncio
import base64
import io
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from os import PathLike
from typing import Any

import torch

from graphs.context import Context, RunContext
from graphs.runs.run import run_question, shared_graph
from graphs.store.sqlite_board import Board
from serving.engine import ChatRenderer
from training.areal.workflow import grpo_config, worker_board_path
from training.para_grpo import ParaGRPOConfig, trace_reward
from training.policy import GenRequest, GenResult, PolicyChatModel, Row, episode_rows
from training.questions import RLPrompt
from training.rollout import Trajectory, build_trajectory


def png_base64(images) -> list[str]:
    """The images as AReaL's ``image2base64`` sends them: PNG (lossless), base64."""
    out = []
    for image in images:
        with io.BytesIO() as buffer:
            image.save(buffer, format="PNG")
            out.append(base64.b64encode(buffer.getvalue()).decode("ascii"))
    return out


@dataclass
class EngineBackend:
    """``PolicyChatModel``'s backend over an AReaL inference engine: one ``agenerate`` per
    call; keeps each call's weight versions for the trajectory."""

    engine: Any  # areal InferenceEngine: async agenerate(ModelRequest) -> ModelResponse
    gconfig: Any  # areal GenerationHyperparameters (has .new(**changes))
    request_type: type  # areal.api.io_struct.ModelRequest
    tokenizer: Any = None
    processor: Any = None
    versions: dict[tuple[tuple[int, ...], tuple[int, ...]], list[int]] = field(default_factory=dict)

    async def submit(self, call: GenRequest) -> GenResult:
        greedy = call.temperature <= 0
        # PNG-encoding the frames is CPU work: off the loop the other episodes share
        images = await asyncio.to_thread(png_base64, call.images) if call.images else None
        request = self.request_type(
            rid=uuid.uuid4().hex,
            input_ids=list(call.prompt_ids),
            gconfig=self.gconfig.new(
                n_samples=1,
                max_new_tokens=call.max_tokens,
                greedy=greedy,
                temperature=1.0 if greedy else call.temperature,
                top_p=1.0,
                top_k=-1,
            ),
            tokenizer=self.tokenizer,
            image_data=images,
            processor=self.processor,
        )
        response = await self.engine.agenerate(request)
        tokens = tuple(response.output_tokens)
        self.versions[(call.prompt_ids, tokens)] = list(response.output_versions)
        return GenResult(tokens, tuple(response.output_logprobs))


def row_versions(rows: Sequence[Row], t: Trajectory, versions: dict) -> list[list[int]]:
    """Per row, the weight version of each id: -1 where nothing was sampled, else the version
    the engine reported for that token. Rows take the trajectory's turns in order (main rows
    consume ``row.turns`` main turns each; sub rows one sub-agent turn each)."""
    main, subs = iter(t.turns), iter(turn for turn in t.sub_turns if turn.completion_ids)
    out = []
    for row in rows:
        turns = [next(main) for _ in range(row.turns)] if row.role == "main" else []
        if row.role == "sub_agent":
            turns = [next(subs)]
        keys = [(turn.prompt_ids, turn.completion_ids) for turn in turns]
        sampled = [v for key in keys for v in versions.get(key, [])]
        mine = iter(sampled)
        out.append([-1] * len(row.prompt_ids) + [next(mine, -1) if m else -1 for m in row.env_mask])
    return out


def row_sample(row: Row, versions: list[int], reward: float, image_token_id: int) -> dict:
    """One row as one AReaL sample (AReaL 1.0.4 VisionRLVRWorkflow's keys), batch dim 1."""
    seq = [*row.prompt_ids, *row.completion_ids]
    sample = {
        "input_ids": torch.tensor([seq], dtype=torch.long),
        "mm_token_type_ids": (torch.tensor([seq]) == image_token_id).long(),
        "loss_mask": torch.tensor([[0] * len(row.prompt_ids) + list(row.env_mask)]).int(),
        "logprobs": torch.tensor([[0.0] * len(row.prompt_ids) + list(row.logprobs)]).float(),
        "versions": torch.tensor([versions], dtype=torch.int32),
        "attention_mask": torch.ones((1, len(seq)), dtype=torch.bool),
        "rewards": torch.tensor([reward], dtype=torch.float32),
    }
    if row.images:
        keys = ("pixel_values", "image_grid_thw")
        sample["multi_modal_input"] = [{k: row.vision[k] for k in keys}]
    return sample


def pad_samples(samples: list[dict]) -> dict:
    """The samples of one episode as one batch, right-padded to the longest (attention 0)."""
    width = max(s["input_ids"].shape[1] for s in samples)
    batch: dict[str, Any] = {}
    for key in (
        "input_ids",
        "mm_token_type_ids",
        "loss_mask",
        "logprobs",
        "versions",
        "attention_mask",
    ):
        fill = -1 if key == "versions" else 0
        rows = [
            torch.nn.functional.pad(s[key], (0, width - s[key].shape[1]), value=fill)
            for s in samples
        ]
        batch[key] = torch.cat(rows)
    batch["rewards"] = torch.cat([s["rewards"] for s in samples])
    if any("multi_modal_input" in s for s in samples):
        batch["multi_modal_input"] = [s.get("multi_modal_input", [{}])[0] for s in samples]
    return batch


class ParaVTEngineWorkflow:
    """``arun_episode(engine, data)``: one graph run of the question in ``data`` (an
    ``RLPrompt`` row) on ``engine``; the episode's rows with its reward, or None when the
    episode cannot be judged (an engine failure, no gradable answer)."""

    def __init__(
        self,
        renderer: ChatRenderer,
        gconfig: Any,
        request_type: type,
        board: Board,
        *,
        algo: ParaGRPOConfig | None = None,
        context: Context | None = None,
        end_ids: Sequence[int] = (),
        max_len: int = 32768,
        video_root: str | None = None,
        processor: Any = None,
    ) -> None:
        self.renderer, self.gconfig, self.request_type = renderer, gconfig, request_type
        self.board, self.algo = board, algo or ParaGRPOConfig()
        self.context, self.end_ids, self.max_len = context or Context(), list(end_ids), max_len
        self.video_root, self.processor = video_root, processor

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict | None:
        prompt = RLPrompt.from_data(data, self.video_root)
        context = self.algo.rollout_context(prompt.id, epoch=prompt.epoch, base=self.context)
        backend = EngineBackend(
            engine, self.gconfig, self.request_type, self.renderer.tokenizer, self.processor
        )
        model = PolicyChatModel(
            self.renderer, backend, end_ids=self.end_ids, max_len=self.max_len, name="areal"
        )
        result = await run_question(
            shared_graph(self.board),
            self.board,
            video_path=prompt.video,
            question=prompt.ask,
            context=RunContext.of(context, model),
        )
        t = build_trajectory(prompt, 0, context, result.trace, model)
        t.parts = trace_reward(t.trace, target=prompt.target, settings=self.algo.reward_settings())
        if t.trace["status"] == "failed" or not t.turns:
            return None  # AReaL drops the episode; nothing was learnt from it
        pad = self.renderer.tokenizer.pad_token_id
        rows = episode_rows(t, subagents=self.algo.train_subagents, pad_id=pad)
        versions = row_versions(rows, t, backend.versions)
        image_token = self.renderer.image_token_id
        return pad_samples(
            [
                row_sample(r, v, t.parts.total, image_token)
                for r, v in zip(rows, versions, strict=True)
            ]
        )


WORKFLOW = "training.areal.engine.ParaVTRolloutWorkflow"
"""The import path AReaL's rollout workers resolve and build with ``workflow_kwargs``."""


def from_kwargs(cls: type, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``ParaVTEngineWorkflow``'s arguments from AReaL's ``workflow_kwargs``: plain, picklable
    values (model paths, AReaL's gconfig, the config's ``paravt`` block)."""
    from transformers import AutoConfig, AutoImageProcessor, AutoTokenizer

    model = kwargs["tokenizer"]
    tokenizer = AutoTokenizer.from_pretrained(model)
    renderer = ChatRenderer(
        tokenizer,
        AutoImageProcessor.from_pretrained(model),
        AutoConfig.from_pretrained(model).image_token_id,
    )
    end_ids = [tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")]
    board = kwargs.get("board_path") or worker_board_path()
    return {
        "renderer": renderer,
        "gconfig": kwargs["gconfig"],
        "request_type": cls.request_type,
        "board": Board(board),
        "algo": grpo_config(kwargs.get("grpo") or {}),
        "context": Context(**(kwargs.get("context") or {})),
        "end_ids": end_ids,
        "max_len": int(kwargs.get("max_len") or 32768),
        "video_root": kwargs.get("video_root"),
        "processor": processor_of(kwargs.get("processor") or model),
    }


def processor_of(value: Any) -> Any:
    """A processor path loaded with ``AutoProcessor``; a processor object as it is (AReaL's
    ``VisionRLVRWorkflow`` takes either)."""
    if isinstance(value, str | PathLike):
        from transformers import AutoProcessor

        return AutoProcessor.from_pretrained(value)
    return value


def __getattr__(name: str) -> Any:
    """``ParaVTRolloutWorkflow``: ``ParaVTEngineWorkflow`` as AReaL's ``RolloutWorkflow``,
    built from ``workflow_kwargs``; exists only where AReaL does, made on first use."""
    if name != "ParaVTRolloutWorkflow":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from areal.api.io_struct import ModelRequest
    from areal.api.workflow_api import RolloutWorkflow

    class ParaVTRolloutWorkflow(ParaVTEngineWorkflow, RolloutWorkflow):
        request_type = ModelRequest

        def __init__(self, **kwargs: Any) -> None:
            ParaVTEngineWorkflow.__init__(self, **from_kwargs(type(self), kwargs))

    ParaVTRolloutWorkflow.__module__ = __name__
    globals()[name] = ParaVTRolloutWorkflow
    return ParaVTRolloutWorkflow
