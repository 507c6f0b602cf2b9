"""The AReaL path against released AReaL itself (1.0.4's own code, not copies of its fields).

- The launcher's YAML loads into AReaL's ``GRPOConfig`` through AReaL's ``load_expr_config``
  and agrees with the PARA-GRPO recipe; the launcher's pre-flight refuses what would go wrong.
- The engine workflow is AReaL's ``RolloutWorkflow``; a group of its episodes goes through
  AReaL's ``GroupedRolloutWorkflow``, trajectory check and group ``Normalization``, and the
  advantages AReaL computes are the ones this project's GRPO computes.

Needs AReaL's API, which `make test-areal` installs into .areal-api (requirements/areal-api.txt)
and names in ``PARAVT_AREAL_API``; skipped without it, as in `make test`.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import logging
import os
import sys
from pathlib import Path

import pytest

FOLDER = os.environ.get("PARAVT_AREAL_API")
if not FOLDER:
    pytest.skip("AReaL's API is not installed: run `make test-areal`", allow_module_level=True)
sys.path.append(FOLDER)  # after .venv: AReaL uses this project's torch and transformers
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
cli_args = importlib.import_module("areal.api.cli_args")  # a named folder must hold AReaL
io_struct = importlib.import_module("areal.api.io_struct")
workflow_api = importlib.import_module("areal.api.workflow_api")
areal_data = importlib.import_module("areal.utils.data")
executor = importlib.import_module("areal.infra.workflow_executor")
remote = importlib.import_module("areal.infra.remote_inf_engine")

# the engine workflow's crop calls and data rows (its fixtures, a tiny model's renderer and
# one needle prompt, come from this folder's conftest.py)
from tests.support.areal import CALLS, data_of  # noqa: E402
from training.advantages import group_advantages  # noqa: E402
from training.areal import engine as areal_engine  # noqa: E402
from training.areal import launch as areal_launch  # noqa: E402
from training.para_grpo import ParaGRPOConfig  # noqa: E402

CONFIG = Path(__file__).resolve().parents[3] / "training/configs/areal_para_grpo.yaml"


def test_released_areal_is_the_version_the_docs_name():
    assert importlib.metadata.version("areal") == "1.0.4"


class Engine:
    """Answers by what the prompt is, so episodes may interleave (AReaL runs a group's
    episodes concurrently): a sub-agent prompt gets a note, a main-agent turn after the first
    the answer (the given answers in turn), a first turn two crop calls. Returns AReaL's own
    ``ModelResponse``."""

    def __init__(self, tokenizer, answers: list[str]) -> None:
        self.tokenizer, self.answers = tokenizer, list(answers)
        self.requests: list = []
        self.end = tokenizer.convert_tokens_to_ids("<|im_end|>")

    async def agenerate(self, req):
        self.requests.append(req)
        await asyncio.sleep(0)
        seen = self.tokenizer.decode(req.input_ids)
        if "You describe video clips" in seen:
            text = "A red square."
        elif seen.count("<|im_start|>assistant") > 1:  # a turn after the crop calls
            text = f"It is red.\n</think>\n<answer>{self.answers.pop(0)}</answer>"
        else:
            text = CALLS
        ids = [*self.tokenizer(text, add_special_tokens=False)["input_ids"], self.end]
        return io_struct.ModelResponse(
            input_tokens=list(req.input_ids),
            output_tokens=ids,
            output_logprobs=[-0.1] * len(ids),
            output_versions=[3] * len(ids),
        )


def workflow(tmp_path, **grpo):
    """``ParaVTRolloutWorkflow`` built from ``workflow_kwargs`` as an AReaL rollout worker
    builds it, on AReaL's own ``GenerationHyperparameters``."""
    from serving.engine import ensure_tiny_model

    model = str(ensure_tiny_model(seed=0))
    # AutoProcessor would build Qwen3-VL's video processor, which needs torchvision (absent
    # here): the image processor stands in; the workflow only hands it to the engine
    from transformers import AutoImageProcessor

    processor = AutoImageProcessor.from_pretrained(model)
    cls = areal_engine.ParaVTRolloutWorkflow
    return cls(
        gconfig=cli_args.GenerationHyperparameters(max_new_tokens=64),
        tokenizer=model,
        processor=processor,
        board_path=str(tmp_path / "board.sqlite"),
        video_root=None,
        grpo={"frame_choices": [2], "full_frames": 2, **grpo},
        context={
            "overview_max_pixels": 4096,
            "crop_max_frames": 2,
            "crop_max_pixels": 4096,
            "summary_max_tokens": 16,
            "max_turns": 1,
            "max_parallel": 2,
        },
    )


def grouped(renderer, prompt, tmp_path, answers, **grpo):
    """One prompt's group, run by AReaL's ``GroupedRolloutWorkflow``: the concatenated batch
    and the engine."""
    flow = workflow(tmp_path, **grpo)
    assert isinstance(flow, workflow_api.RolloutWorkflow)
    engine = Engine(renderer.tokenizer, answers)
    group = remote.GroupedRolloutWorkflow(flow, len(answers), logging.getLogger("test"))
    try:
        batch = asyncio.run(group.arun_episode(engine, data_of(prompt)))
    finally:
        flow.board.close()
    return batch, engine


def test_a_group_passes_areal_s_checks_and_its_advantages_are_this_project_s(
    renderer,
    prompt,
    tmp_path,
):
    wrong = next(o[0] for o in prompt.options if o[0] != prompt.target)
    batch, engine = grouped(renderer, prompt, tmp_path, [prompt.target, wrong] * 2)
    assert executor.check_trajectory_format(batch, batch_size=4)  # raises on a bad layout
    assert len(engine.requests) == 4 * 4  # per episode: crop calls, two notes, the answer
    assert all(isinstance(r, io_struct.ModelRequest) for r in engine.requests)
    assert len(batch["multi_modal_input"]) == 4  # one entry per row, frames included
    rewards = batch["rewards"]
    assert sorted(rewards.tolist())[2] - sorted(rewards.tolist())[1] >= 1.0  # 2 right, 2 wrong
    # AReaL's normaliser with the config's group setting, population std as group_advantages
    norm = cli_args.NormConfig(
        mean_level="group", std_level="group", std_unbiased=False, group_size=4, eps=1e-6
    )
    theirs = areal_data.Normalization(norm)(rewards)
    ours = group_advantages(rewards.view(1, 4), eps=1e-6).view(-1)
    assert torch.allclose(theirs.float(), ours, atol=1e-5)
    assert ((theirs > 0) == (rewards > rewards.mean())).all()


def test_sub_agent_rows_would_mix_prompts_on_areal_1_so_the_launcher_refuses_them(
    renderer,
    prompt,
    tmp_path,
):
    wrong = next(o[0] for o in prompt.options if o[0] != prompt.target)
    batch, _ = grouped(renderer, prompt, tmp_path, [prompt.target, wrong], train_subagents=True)
    rows = batch["rewards"]
    assert len(rows) == 6  # per episode: its main row and one row per note
    per_episode = group_advantages(rows[[0, 3]].view(1, 2)).view(-1)
    assert (per_episode != 0).all()  # one right and one wrong: both carry a signal
    # AReaL 1.0.4's slices of G = 2 rows: the first holds one episode's main row and a note,
    # so that episode's main row gets no signal at all
    norm = cli_args.NormConfig(mean_level="group", std_level="group", group_size=2)
    assert areal_data.Normalization(norm)(rows)[0] == 0
    grpo = ParaGRPOConfig(train_subagents=True)
    problems = areal_launch.grouping_problems(grpo, importlib.metadata.version("areal"))
    assert problems and "AReaL >= 2.0" in problems[0]
    assert areal_launch.grouping_problems(grpo, "2.0.0") == []
    assert areal_launch.grouping_problems(ParaGRPOConfig(), "1.0.4") == []


@pytest.fixture
def environment(monkeypatch, tmp_path):
    """The variables the YAML reads, as a user exports them (docs/areal.md)."""
    from serving.engine import ensure_tiny_model

    model = str(ensure_tiny_model(seed=0))
    for name, value in {
        "PARAVT_POLICY": model,
        "PARAVT_RL_TOKENIZER": model,
        "PARAVT_RL_DATA": str(tmp_path / "rl.jsonl"),
        "PARAVT_FILEROOT": str(tmp_path / "runs"),
        "PARAVT_AREAL_ADMIN_KEY": "test-key",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PARAVT_VIDEO_ROOT", raising=False)
    return model


def test_the_config_loads_into_areal_s_grpo_config_and_agrees_with_the_recipe(environment):
    config, _ = cli_args.load_expr_config(
        ["--config", str(CONFIG), "experiment_name=t", "trial_name=t"],
        areal_launch.ParaVTAReaLConfig,
    )
    assert isinstance(config, cli_args.GRPOConfig)
    assert config.rollout.tokenizer_path == environment
    path, kwargs = areal_launch.workflow_choice(
        dict(config.paravt), config.gconfig, config.rollout.tokenizer_path
    )
    assert path == areal_engine.WORKFLOW
    grpo = areal_launch.grpo_config(kwargs["grpo"])
    assert areal_launch.recipe_mismatches(config, grpo) == []
    assert config.actor.reward_norm.group_size == config.gconfig.n_samples == grpo.group_size


def test_the_launcher_refuses_before_training_and_names_every_problem(environment, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the trainer was started despite the problems")

    monkeypatch.setattr("areal.PPOTrainer", never)
    with pytest.raises(SystemExit) as refused:
        areal_launch.main(
            [
                "--config",
                str(CONFIG),
                "experiment_name=t",
                "trial_name=t",
                "paravt.grpo.train_subagents=true",
                "gconfig.n_samples=4",
            ]
        )
    message = str(refused.value)
    assert "gconfig.n_samples is 4; PARA-GRPO needs 8" in message
    assert "train_subagents needs AReaL >= 2.0" in message
    # the tiny model's template does not open <think>, which the para_grpo arm prefills
    assert "must end its generation prompt with '<think>\\n'" in message


def test_the_launcher_starts_areal_s_trainer_with_the_engine_workflow(
    environment,
    monkeypatch,
    tmp_path,
    prompt,
):
    import json

    from tests.support.checkpoints import checkpoint

    # the rollout template must open <think> itself (the arm's Think Prefix, docs/areal.md)
    tokenizer = checkpoint(tmp_path / "rl-tokenizer", thinking=True)
    monkeypatch.setenv("PARAVT_RL_TOKENIZER", str(tokenizer))
    (tmp_path / "rl.jsonl").write_text(json.dumps(data_of(prompt)) + "\n")
    started = {}

    class Trainer:  # AReaL's PPOTrainer needs GPUs: record what it is given
        def __init__(self, config, train_dataset):
            started.update(config=config, rows=train_dataset.to_list())

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def train(self, workflow, workflow_kwargs):
            started.update(workflow=workflow, kwargs=workflow_kwargs)

    monkeypatch.setattr("areal.PPOTrainer", Trainer)
    areal_launch.main(["--config", str(CONFIG), "experiment_name=t", "trial_name=t"])
    assert isinstance(started["config"], cli_args.GRPOConfig)
    assert started["workflow"] == areal_engine.WORKFLOW
    assert isinstance(started["kwargs"]["gconfig"], cli_args.GenerationHyperparameters)
    assert started["kwargs"]["tokenizer"] == str(tokenizer)
    assert [row["id"] for row in started["rows"]] == [prompt.id]
