"""Rollouts on the tiny Qwen3-VL: recorded ids and log-probs, loss masks, gating per group."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from agents import prompts  # noqa: E402
from agents.client.completion import EndpointError  # noqa: E402
from agents.protocol import THINK_PREFIX  # noqa: E402
from agents.question import Question  # noqa: E402
from agents.requests import ModelRequest, SamplingParams  # noqa: E402
from graphs.builder import compile_graph  # noqa: E402
from graphs.context import Context  # noqa: E402
from graphs.runs.run import run_question  # noqa: E402
from serving.engine import Completion as EngineCompletion  # noqa: E402
from serving.engine import LocalVLM  # noqa: E402
from tests.support.rewording import PREFIX, reword_templates  # noqa: E402
from training.gating import draw_frames  # noqa: E402
from training.para_grpo import ParaGRPOConfig  # noqa: E402
from training.recording import RecordingChatModel, token_logprobs  # noqa: E402
from training.rollout import (  # noqa: E402
    RLPrompt,
    batch_prompts,
    build_trajectory,
    rollout_group,
    rollout_metrics,
)

SMALL = Context(
    overview_frames=2,
    overview_max_pixels=4096,
    crop_max_frames=2,
    crop_max_pixels=4096,
    summary_max_tokens=8,
    max_new_tokens=12,
    max_turns=1,
    temperature=0.7,
)
CALL = (
    "I should look.\n</think>\n<tool_call>\n"
    '{"name": "crop_video", "arguments": {"start_time": 10, "end_time": 20}}\n</tool_call>'
)


@pytest.fixture(scope="module")
def vlm(tmp_path_factory):
    from serving.tiny_model import build_tiny_model

    return LocalVLM(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0))


@pytest.fixture
def prompt(needle_video):
    return RLPrompt(
        "needle-mc",
        needle_video.path,
        "Which colour?",
        ("A. red", "B. blue"),
        "multiple_choice",
        "A",
    )


def frame_messages(video_path: str, n: int = 2) -> list[dict]:
    ref = prompts.frames_part(video_path, [5.0 * (i + 1) for i in range(n)], 4096)
    return prompts.expand_frames(
        [{"role": "user", "content": [ref, prompts.text_part("What is shown?")]}]
    )


def ask(messages, params, prefill=None) -> ModelRequest:
    return ModelRequest("main", messages, params, prefill=prefill)


def recompute(vlm, prompt_ids, completion_ids, vision, temperature):
    with torch.no_grad():
        return token_logprobs(
            vlm, vlm.model, prompt_ids, completion_ids, vision, temperature=temperature
        )


@pytest.mark.parametrize("temperature", [0.7, 0.0])
async def test_recorded_logprobs_match_a_recomputation(vlm, needle_video, temperature):
    recorder = RecordingChatModel(vlm, seed=3)
    params = SamplingParams(temperature=temperature, max_tokens=16)
    done = await recorder.complete(ask(frame_messages(needle_video.path), params, THINK_PREFIX))
    (record,) = recorder.records
    assert done.token_ids == record.token_ids and len(record.logprobs) == len(record.token_ids)
    assert record.temperature == (temperature or 1.0) and record.vision["pixel_values"].numel()
    again = recompute(vlm, record.prompt_ids, record.token_ids, record.vision, record.temperature)
    assert torch.allclose(again, torch.tensor(record.logprobs), atol=1e-4)
    assert done.usage.image_tokens > 0 and done.prompt_token_ids == record.prompt_ids


async def test_the_recorder_renders_and_samples_as_the_server_does(vlm, needle_video, tmp_path):
    from fastapi.testclient import TestClient

    from serving.server import create_app

    messages = frame_messages(needle_video.path)
    recorder = RecordingChatModel(vlm)
    done = await recorder.complete(
        ask(messages, SamplingParams(temperature=0.0, max_tokens=10), THINK_PREFIX)
    )
    body = {
        "messages": [*messages, {"role": "assistant", "content": THINK_PREFIX}],
        "continue_final_message": True,
        "add_generation_prompt": False,
        "temperature": 0.0,
        "max_tokens": 10,
        "return_token_ids": True,
    }
    with TestClient(create_app(vlm.model.name_or_path)) as client:
        reply = client.post("/v1/chat/completions", json=body).json()
    assert tuple(reply["prompt_token_ids"]) == done.prompt_token_ids
    assert tuple(reply["choices"][0]["token_ids"]) == done.token_ids
    assert reply["choices"][0]["message"]["content"] == done.text


async def test_seeded_rollouts_are_reproducible_and_differ_between_seeds(vlm, needle_video):
    params = SamplingParams(temperature=1.0, max_tokens=12)

    async def sample(seed):
        return (
            await RecordingChatModel(vlm, seed=seed).complete(
                ask(frame_messages(needle_video.path), params)
            )
        ).token_ids

    assert await sample(1) == await sample(1) != await sample(2)


class ScriptedFirstTurn(RecordingChatModel):
    """The real policy, except that the main agent's first turn is a crop_video call (an
    untrained model never writes one), scored by the policy as if sampled."""

    forced = False

    async def complete(self, request, *, on_text=None):
        self.forced = request.role == "main" and not self.records
        return await super().complete(request, on_text=on_text)

    def _sample(self, prompt, settings):
        if not self.forced:
            return super()._sample(prompt, settings)
        tok = self.vlm.tokenizer
        ids = [
            *tok(CALL, add_special_tokens=False)["input_ids"],
            tok.convert_tokens_to_ids("<|im_end|>"),
        ]
        with torch.no_grad():
            logp = token_logprobs(
                self.vlm,
                self.vlm.model,
                prompt.input_ids,
                ids,
                prompt.vision,
                temperature=settings.temperature,
            )
        return EngineCompletion(ids, CALL, "stop", [{"logprob": float(v)} for v in logp])


@pytest.mark.parametrize("reworded", [False, True], ids=["plain", "reworded-prompts"])
async def test_trajectories_mask_tool_responses_and_the_prefill(
    vlm, prompt, board, reworded, monkeypatch
):
    if reworded:  # the recorder and the masks follow request roles, never prompt wording
        reword_templates(monkeypatch)
    recorder = ScriptedFirstTurn(vlm, seed=0)
    context = replace(SMALL, think_prefix=True)
    result = await run_question(
        compile_graph(recorder, board),
        board,
        video_path=prompt.video,
        question=Question(prompt.question, options=prompt.options, kind=prompt.kind),
        context=context,
    )
    traj = build_trajectory(prompt, 0, context, result.trace, recorder)
    tok = vlm.tokenizer
    first, second = traj.turns
    assert tok.decode(first.completion_ids, skip_special_tokens=True) == CALL
    assert traj.executed_calls == 1 and [t.agent for t in traj.sub_turns] == ["sub:0:0"]
    assert [r.role for r in recorder.records] == ["main", "sub_agent", "main"]
    assert (PREFIX in tok.decode(first.prompt_ids)) is reworded
    for turn in (first, second):
        ids, mask = turn.input_ids, turn.loss_mask
        assert len(ids) == len(mask) and sum(mask) == len(turn.completion_ids)
        assert [i for i, m in zip(ids, mask, strict=True) if m] == list(turn.completion_ids)
        assert not any(mask[: len(turn.prompt_ids)]) and all(mask[len(turn.prompt_ids) :])
        prompt_text = tok.decode(turn.prompt_ids, skip_special_tokens=False)
        assert prompt_text.endswith("<|im_start|>assistant\n" + THINK_PREFIX)  # prefill: mask 0
    # The tool response reaches the model inside turn 2's prompt, never in a trained span.
    open_id, close_id = tok.convert_tokens_to_ids(["<tool_response>", "</tool_response>"])
    ids, mask = second.input_ids, second.loss_mask
    start, end = ids.index(open_id), ids.index(close_id)
    assert start < end < len(second.prompt_ids) and not any(mask[start : end + 1])
    summary = tok.decode(traj.sub_turns[0].completion_ids, skip_special_tokens=True).strip()
    assert summary in tok.decode(ids[start : end + 1], skip_special_tokens=False)
    assert traj.trained_turns() == traj.turns
    assert traj.trained_turns(subagents=True) == [*traj.turns, *traj.sub_turns]
    for t in [*traj.turns, *traj.sub_turns]:
        again = recompute(vlm, t.prompt_ids, t.completion_ids, t.vision, t.temperature)
        assert torch.allclose(again, torch.tensor(t.old_logprobs), atol=1e-4)
    metrics = rollout_metrics([traj])
    assert metrics["kappa"] == 1.0 and metrics["calls_per_rollout"] == 1.0


async def test_gating_shares_the_frame_count_within_a_group(vlm, needle_video, board):
    algo = ParaGRPOConfig(arm="para_grpo", group_size=3, max_new_tokens=8, frame_choices=(1, 2, 3))
    recorder = RecordingChatModel(vlm)
    ids = [f"q{i}" for i in range(6)]
    groups = await asyncio.gather(
        *(
            rollout_group(
                recorder,
                board,
                RLPrompt(pid, needle_video.path, "Which colour?", (), "open_ended", "red"),
                algo.rollout_context(pid, base=SMALL),
                group_size=3,
                seed=0,
            )
            for pid in ids
        )
    )
    counts = []
    for pid, group in zip(ids, groups, strict=True):
        drawn = draw_frames(pid, choices=(1, 2, 3))
        assert [len(t.trace["overview"]["timestamps"]) for t in group] == [drawn] * 3
        assert [t.trace["model_calls"][0]["frames_encoded"] for t in group] == [drawn] * 3
        assert len({t.turns[0].completion_ids for t in group}) > 1, "rollouts must differ"
        assert all(t.trace["settings"]["think_prefix"] for t in group)
        counts.append(drawn)
    assert len(set(counts)) > 1, "different prompts draw different budgets"


def test_batches_walk_shuffled_epochs():
    items = [RLPrompt(str(i), "v", "q", (), "open_ended", "t") for i in range(5)]
    seen = [batch_prompts(items, step, 2) for step in range(5)]
    flat = [(p.id, epoch) for batch in seen for p, epoch in batch]
    assert sorted(pid for pid, epoch in flat if epoch == 0) == ["0", "1", "2", "3", "4"]
    assert [epoch for _, epoch in flat] == [0] * 5 + [1] * 5
    assert batch_prompts(items, 3, 2) == seen[3]


async def test_a_request_the_model_rejects_is_a_failed_rollout_not_a_crash(vlm, prompt, board):
    recorder = RecordingChatModel(vlm)
    with pytest.raises(EndpointError) as caught:
        await recorder.complete(
            ask([{"role": "user", "content": "hi"}], SamplingParams(max_tokens=10**6))
        )
    assert caught.value.status == 400 and "max_tokens" in str(caught.value)
    context = replace(SMALL, max_new_tokens=10**6)
    (traj,) = await rollout_group(recorder, board, prompt, context, group_size=1, seed=0)
    assert traj.trace["status"] == "failed" and traj.turns == [] and traj.sub_turns == []
    metrics = rollout_metrics([traj])
    assert metrics["failed"] == 1.0 and metrics["f_tau"] is None and metrics["kappa"] is None
