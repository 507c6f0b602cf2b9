"""PARA-GRPO through TRL's GRPOTrainer on the tiny Qwen3-VL: episodes -> rows and masks,
images in the forward, sampling log-probs = TRL's, the CLI end to end and a rising reward
(how it is launched: tests/training/test_trl_launch.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from graphs.context import Context  # noqa: E402
from training.para_grpo import ParaGRPOConfig  # noqa: E402
from training.policy import GenResult, Row, chain_turns, episode_rows  # noqa: E402
from training.rollout import Trajectory, Turn  # noqa: E402
from training.trl import grpo as trl_grpo  # noqa: E402
from training.trl.grpo import TRLRunConfig  # noqa: E402
from training.trl.trainer import ParaVTGRPOTrainer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SMALL = Context(
    overview_max_pixels=4096,
    crop_max_frames=2,
    crop_max_pixels=4096,
    summary_max_tokens=16,
    max_turns=1,
)
CALL = '{"name": "crop_video", "arguments": {"start_time": 0, "end_time": 5}}'


@pytest.fixture(scope="module")
def model_dir():
    from serving.engine import ensure_tiny_model

    return ensure_tiny_model(seed=0)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    from training.rollout import needle_prompts

    folder = tmp_path_factory.mktemp("needles")
    needle_prompts(folder, n_videos=1, duration=20.0)
    return folder


def run_config(model_dir, data_dir, out, **kw) -> TRLRunConfig:
    return TRLRunConfig(
        model=str(model_dir), output_dir=str(out), data=str(data_dir), n_videos=0, threads=1, **kw
    )


# --- episode -> rows, as pure functions ------------------------------------------------------


def turn(prompt, completion, agent="main", vision=None):
    logprobs = tuple(-0.1 * (k + 1) for k in range(len(completion)))
    role = "main" if agent == "main" else "sub_agent"
    return Turn(agent, role, 0, tuple(prompt), tuple(completion), logprobs, vision or {}, 0.7)


def image(n_rows, value):
    return {
        "pixel_values": torch.full((n_rows, 3), value),
        "image_grid_thw": torch.tensor([[1, 2, n_rows // 2]]),
    }


def two_images(value):
    first, second = image(4, value), image(4, 9.0)
    return {k: torch.cat([first[k], second[k]]) for k in first}


def test_turns_chain_exactly_where_the_next_prompt_extends_the_sequence():
    first = turn([1, 2, 3], [10, 11], vision=image(4, 0.5))
    # the next prompt: the whole first sequence, then injected ids (tool response, header)
    second = turn([1, 2, 3, 10, 11, 50, 51, 52], [12, 13, 14], vision=two_images(0.5))
    [row] = chain_turns([first, second])
    assert row.prompt_ids == (1, 2, 3) and row.turns == 2
    assert row.completion_ids == (10, 11, 50, 51, 52, 12, 13, 14)
    assert row.env_mask == (1, 1, 0, 0, 0, 1, 1, 1)
    assert row.logprobs == (*first.old_logprobs, 0.0, 0.0, 0.0, *second.old_logprobs)
    assert row.images == 2
    assert torch.equal(row.vision["pixel_values"], second.vision["pixel_values"])

    cases = {
        "an id re-tokenised differently": turn([1, 2, 3, 10, 99, 50], [12]),
        "a shorter prompt": turn([1, 2], [12]),
        "other pixels for the same image": turn(
            [1, 2, 3, 10, 11, 50], [12], vision=two_images(0.7)
        ),
    }
    for why, later in cases.items():
        rows = chain_turns([first, later])
        assert [r.turns for r in rows] == [1, 1], why
        assert rows[1].prompt_ids == later.prompt_ids and rows[1].env_mask == (1,), why


def test_rows_of_an_episode():
    from training.questions import RLPrompt

    item = RLPrompt("p", "v", "q", (), "open_ended", "x")
    main, sub = turn([1, 2], [3, 4]), turn([7, 8], [9], agent="sub:0:0")

    def traj(status="answered", mains=(main,)):
        trace = {"status": status, "tool_calls": [], "model_calls": []}
        return Trajectory(item, 0, Context(), trace, list(mains), [sub])

    assert [r.agent for r in episode_rows(traj(), subagents=False, pad_id=0)] == ["main"]
    both = episode_rows(traj(), subagents=True, pad_id=0)
    assert [r.agent for r in both] == ["main", "sub:0:0"] and both[1].env_mask == (1,)
    failed = episode_rows(traj("failed"), subagents=True, pad_id=0)
    assert len(failed) == 2 and all(set(r.env_mask) == {0} for r in failed), "nothing trained"
    [none] = episode_rows(traj(mains=()), subagents=False, pad_id=5)
    assert none == Row("none", None, (5,), (5,), (0,), (0.0,), {})


# --- through the trainer, with scripted generations -----------------------------------------


class Scripted:
    """A generation backend writing fixed texts by role and turn (the main agent's answer
    alternates between two lengths, so a group's rewards differ)."""

    def __init__(self, tokenizer, end_id: int, *, by_character: bool = False) -> None:
        self.tok, self.end, self.answers, self.by_character = tokenizer, end_id, 0, by_character

    def ids(self, request) -> list[int]:
        text = self.text(request)
        if self.by_character and request.role == "main" and request.turn == 0:
            # a tokenisation the renderer never produces: the text comes back re-tokenised
            return [i for c in text for i in self.tok(c, add_special_tokens=False)["input_ids"]]
        return self.tok(text, add_special_tokens=False)["input_ids"]

    def text(self, request) -> str:
        if request.role == "sub_agent":
            return "A red square moves left."
        if request.turn == 0:
            return f"I look first.\n</think>\n<tool_call>{CALL}</tool_call>"
        self.answers += 1
        return "It moved.\n</think>\n<answer>A</answer>" + " " * (self.answers % 2)

    def generate(self, requests):
        out = []
        for r in requests:
            ids = (*self.ids(r), self.end)
            out.append(GenResult(tuple(ids), (0.0,) * len(ids)))
        return out


class Recorded(ParaVTGRPOTrainer):
    """The trainer with scripted generations, keeping what each loss pass received."""

    seen: ClassVar[list[dict]] = []
    by_character = False

    @contextmanager
    def generation_backend(self, eos_ids):
        tok = self.renderer.tokenizer
        end = tok.convert_tokens_to_ids("<|im_end|>")
        yield Scripted(tok, end, by_character=self.by_character)

    def _compute_loss(self, model, inputs):
        type(self).seen.append(dict(inputs))
        return super()._compute_loss(model, inputs)


def scripted_step(model_dir, data_dir, out, *, subagents: bool, by_character: bool = False):
    Recorded.seen, Recorded.by_character = [], by_character
    run = run_config(model_dir, data_dir, out, steps=1, prompts_per_step=1, objective="brevity")
    algo = ParaGRPOConfig(
        group_size=2,
        max_new_tokens=64,
        kl_coef=0.0,
        train_subagents=subagents,
        frame_choices=(2,),
        full_frames=2,
    )
    trainer, board = trl_grpo.build_trainer(run, algo, SMALL, trainer_class=Recorded)
    try:
        trainer.train()
    finally:
        board.close()
    [inputs] = Recorded.seen
    return trainer, inputs


def decode_rows(trainer, inputs):
    """Per row: (text of trained ids, text of masked completion ids, images, advantage)."""
    tok, rows = trainer.renderer.tokenizer, []
    ids, keep = inputs["completion_ids"], inputs["completion_mask"] * inputs["tool_mask"]
    for k in range(ids.shape[0]):
        real = inputs["completion_mask"][k].bool()
        trained = tok.decode(ids[k][keep[k].bool()])
        masked = tok.decode(ids[k][real & ~keep[k].bool()])
        rows.append((trained, masked, inputs["num_images"][k], float(inputs["advantages"][k])))
    return rows


@pytest.mark.parametrize("subagents", [False, True])
def test_tool_responses_carry_no_loss_and_sub_agents_train_only_when_asked(
    subagents, model_dir, data_dir, tmp_path
):
    trainer, inputs = scripted_step(model_dir, data_dir, tmp_path, subagents=subagents)
    rows = decode_rows(trainer, inputs)
    episodes = trainer.paravt.last
    assert len(episodes) == 2 and all(len(e.trajectory.turns) == 2 for e in episodes)
    assert all(e.trajectory.executed_calls == 1 for e in episodes), "the call ran"
    main = rows[:2]  # TRL's own samples: the chained main-agent turns
    for trained, masked, n_images, _ in main:
        assert trained.startswith("I look first.\n</think>\n<tool_call>") and "It moved." in trained
        assert "<tool_response>" not in trained and "A red square" not in trained
        assert "<tool_response>" in masked and "A red square moves left." in masked
        assert "<think>" in masked, "the Think Prefix of turn 2 is injected, not trained"
        assert n_images == 2, "the overview frames, once: the row's images are its last prompt's"
    extra = rows[2:]
    if not subagents:
        assert extra == [], "no sub-agent row"
        return
    assert [trained for trained, *_ in extra] == ["A red square moves left.<|im_end|>"] * 2
    assert all(masked == "" and n == 2 for _, masked, n, _ in extra), "window frames only"
    advantages = [a for *_, a in main]
    assert advantages[0] == pytest.approx(-advantages[1]) and abs(advantages[0]) > 0.5
    assert [a for *_, a in extra] == pytest.approx(advantages), "the episode's advantage"
    assert int(inputs["num_items_in_batch"]) == int(
        (inputs["completion_mask"] * inputs["tool_mask"]).sum()
    )
    grid = inputs["image_grid_thw"]
    assert inputs["pixel_values"].shape[0] == int(grid.prod(-1).sum()) and len(grid) == sum(
        n for *_, n, _ in rows
    )


def test_a_turn_whose_ids_do_not_survive_re_rendering_starts_its_own_row(
    model_dir, data_dir, tmp_path
):
    trainer, inputs = scripted_step(
        model_dir, data_dir, tmp_path, subagents=False, by_character=True
    )
    rows = decode_rows(trainer, inputs)
    assert len(rows) == 4, "per episode: turn 1's row (TRL's sample), then turn 2's"
    for trained, masked, n_images, _ in rows[:2]:
        assert trained == f"I look first.\n</think>\n<tool_call>{CALL}</tool_call><|im_end|>"
        assert masked == "" and n_images == 2
    for trained, masked, n_images, _ in rows[2:]:
        assert trained.startswith("It moved.") and masked == "" and n_images == 2
    [second] = [e.rows[1] for e in trainer.paravt.last[:1]]
    prompt = trainer.renderer.tokenizer.decode(second.prompt_ids)
    assert "<tool_response>" in prompt and "A red square moves left." in prompt
    assert trainer.paravt.metrics()["chain_breaks"] == 0.5


# --- through the trainer, generating with the tiny model ------------------------------------


class Checked(ParaVTGRPOTrainer):
    """Compares, before any update, the sampling log-probs with TRL's own recomputation."""

    gaps: ClassVar[list[float]] = []

    def _compute_loss(self, model, inputs):
        if not type(self).gaps:
            ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
            mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
            keep = (inputs["completion_mask"] * inputs["tool_mask"]).bool()
            images = {k: inputs[k] for k in ("pixel_values", "image_grid_thw", "num_images")}
            sampled, width = inputs["sampling_per_token_logps"], ids.shape[1] - mask.shape[1]
            with torch.no_grad():
                for vision in (images, {}):  # with the episode's frames, then without
                    logps, _, _ = self._get_per_token_logps_and_entropies(
                        model, ids, mask, inputs["completion_ids"].shape[1] + width, **vision
                    )
                    type(self).gaps.append(float((logps - sampled)[keep].abs().max()))
        return super()._compute_loss(model, inputs)


def test_sampling_logprobs_are_what_trl_recomputes_with_the_frames(model_dir, data_dir, tmp_path):
    Checked.gaps = []
    run = run_config(model_dir, data_dir, tmp_path, steps=1, prompts_per_step=1)
    algo = ParaGRPOConfig(group_size=2, max_new_tokens=8, frame_choices=(4,), full_frames=4)
    trainer, board = trl_grpo.build_trainer(run, algo, SMALL, trainer_class=Checked)
    try:
        trainer.train()
    finally:
        board.close()
    with_frames, without = Checked.gaps
    print(f"max |sampled - recomputed| log-prob: {with_frames:.2e} ({without:.2e} without frames)")
    assert with_frames < 5e-3, "the ids and images TRL trains on are those sampled from"
    assert without > 20 * with_frames, "and the frames matter to that"


# --- the entry point, end to end ------------------------------------------------------------


SMALL_FLAGS = [
    "--overview-max-pixels",
    "4096",
    "--crop-max-frames",
    "2",
    "--crop-max-pixels",
    "4096",
    "--summary-max-tokens",
    "16",
    "--max-turns",
    "1",
]


@pytest.mark.slow
def test_the_cli_trains_and_saves_a_model_the_server_serves(model_dir, data_dir, tmp_path):
    from fastapi.testclient import TestClient

    from serving.server import create_app

    out = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "training.trl.grpo",
        "--arm",
        "para_grpo",
        "--model",
        str(model_dir),
        "--output-dir",
        str(out),
        "--data",
        str(data_dir),
        "--n-videos",
        "0",
        "--steps",
        "2",
        "--prompts-per-step",
        "1",
        "--group-size",
        "2",
        "--max-new-tokens",
        "16",
        "--frame-choices",
        "2",
        "4",
        "--full-frames",
        "4",
        "--threads",
        "1",
        *SMALL_FLAGS,
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in (out / "grpo.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [1, 2]
    assert all({"reward", "f_tau", "kappa", "overview_frames"} <= line.keys() for line in lines)
    assert {line["arm"] for line in lines} == {"para_grpo"}
    with TestClient(create_app(str(out / "model"))) as client:
        body = {"messages": [{"role": "user", "content": "Hi?"}], "max_tokens": 2}
        assert client.post("/v1/chat/completions", json=body).status_code == 200


@pytest.mark.slow
def test_the_reward_rises_on_an_easy_objective(model_dir, data_dir, tmp_path):
    """The untrained model's noise varies in its share of even token ids within a group, so
    TRL's GRPO has signal from step 0; within 24 steps the share climbs well above chance."""
    # One episode at a time: TRL's generation draws every batch from one random stream, so
    # with concurrent episodes a call's tokens depend on the timing that batched it.
    run = run_config(
        model_dir,
        data_dir,
        tmp_path,
        steps=24,
        prompts_per_step=2,
        objective="even_tokens",
        rollout_concurrency=1,
    )
    # lr 2e-2, twice training.cpu_grpo's test: at 1e-2 the share had only reached 0.66 by step 24
    algo = ParaGRPOConfig(
        arm="para_grpo",
        group_size=4,
        max_new_tokens=16,
        learning_rate=2e-2,
        frame_choices=(2, 4),
        full_frames=4,
        kl_coef=0.01,
    )
    log = trl_grpo.train(run, algo, replace(SMALL, summary_max_tokens=8))
    rewards = [json.loads(line)["reward"] for line in log.read_text().splitlines()]
    first, last = sum(rewards[:5]) / 5, sum(rewards[-5:]) / 5
    print(f"even-token share through TRL: first 5 steps {first:.3f}, last 5 steps {last:.3f}")
    assert len(rewards) == 24 and last > first + 0.2 and last > 0.75
