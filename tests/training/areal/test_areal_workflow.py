"""training.areal.workflow without AReaL: graph runs -> rewards, recorded turns, proxy requests."""

from __future__ import annotations

import dataclasses
import doctest
import json
import pickle
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import yaml

import training.areal.launch as launch
import training.areal.workflow as aw
import training.questions as questions
from agents.client.completion import Completion, Usage
from agents.media.video import VideoError
from agents.protocol import THINK_PREFIX
from agents.question import Question
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question
from tests.support.fakes import ScriptedModel, calls
from training.para_grpo import ParaGRPOConfig, trace_reward
from training.questions import RLPrompt, normalise_target

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "training" / "configs" / "areal_para_grpo.yaml"
OPTIONS = ["A. red", "B. green", "C. blue", "D. yellow"]
SMALL = Context(overview_max_pixels=4096, crop_max_frames=4, crop_max_pixels=4096)
FAST = ParaGRPOConfig(frame_choices=(4,))  # one small gating draw keeps the graph runs quick
ANSWER_A = "<think>The notes say red.</think><answer>A</answer>"
INSTRUCT_PROMPT = "<|im_start|>user\n?<|im_end|>\n<|im_start|>assistant\n"
THINKING_PROMPT = INSTRUCT_PROMPT + "<think>\n"


def test_doctests_pass():
    assert doctest.testmod(aw).failed == doctest.testmod(questions).failed == 0


def test_importing_the_adapter_imports_neither_areal_nor_torch():
    code = (
        "import sys, training.areal.workflow\n"
        "heavy = {'areal', 'torch', 'transformers'} & {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_launcher_and_stats_name_the_separate_environment(monkeypatch):
    monkeypatch.setitem(sys.modules, "areal", None)  # `import areal` raises ImportError
    entry_points = (
        lambda: launch.main(["--config", str(CONFIG)]),
        lambda: aw.log_areal_stats({}),
        lambda: launch.ParaVTAReaLConfig,
    )
    for call in entry_points:
        with pytest.raises(ImportError, match=r"separate AReaL environment.*docs/areal\.md"):
            call()


def test_the_config_class_is_built_on_areal_s_and_importable_by_name(monkeypatch):
    @dataclasses.dataclass
    class GRPOConfig:  # stands in for areal.api.cli_args.GRPOConfig
        seed: int = 1

    cli_args = types.ModuleType("areal.api.cli_args")
    cli_args.GRPOConfig = GRPOConfig
    for name, module in {
        "areal": types.ModuleType("areal"),
        "areal.api": types.ModuleType("areal.api"),
        "areal.api.cli_args": cli_args,
    }.items():
        monkeypatch.setitem(sys.modules, name, module)
    assert "ParaVTAReaLConfig" not in vars(launch)  # not built at import
    try:
        config_class = launch.ParaVTAReaLConfig
        assert issubclass(config_class, GRPOConfig)
        assert config_class.__module__ == "training.areal.launch"
        assert config_class(paravt={"grpo": {}}).paravt == {"grpo": {}}
        assert config_class().paravt == {}
        assert pickle.loads(pickle.dumps(config_class)) is config_class
    finally:
        vars(launch).pop("ParaVTAReaLConfig", None)
    with pytest.raises(AttributeError):
        launch.NoSuchThing  # noqa: B018


# --- graph run -> reward and recorded interactions ---------------------------------------------


async def graph_trace(model, board, video, grpo=FAST, prompt_id="q1") -> dict:
    graph = compile_graph(model, board)
    result = await run_question(
        graph,
        board,
        video_path=video.path,
        question=Question("What colour is the shape?", options=OPTIONS),
        context=grpo.rollout_context(prompt_id, base=SMALL),
    )
    return result.trace


async def test_a_tool_using_rollout_rewards_every_main_turn(needle_video, board):
    model = ScriptedModel(main=[calls((0, 20), (20, 40)), ANSWER_A])
    trace = await graph_trace(model, board, needle_video)
    outcome = aw.rollout_outcome(trace, target="A", config=FAST)
    expected = trace_reward(trace, target="A", settings=FAST.reward_settings())
    assert outcome.parts == expected and outcome.reward == expected.total
    assert expected.accuracy == 1.0 and expected.tool == 0.8  # 0.3 results came back + 0.5
    assert [(i.agent, i.turn, i.reward) for i in outcome.interactions] == [
        ("main", 0, outcome.reward),
        ("main", 1, outcome.reward),
    ]
    assert [r.prefill for r in model.main_requests] == [THINK_PREFIX, THINK_PREFIX]
    stats = outcome.stats
    assert (stats["reward"], stats["accuracy"], stats["tool"]) == (outcome.reward, 1.0, 0.8)
    assert (stats["used_tool"], stats["tool_calls"], stats["turns"]) == (1.0, 2.0, 2.0)
    assert (stats["overview_frames"], stats["degenerate"]) == (4.0, 0.0)
    assert stats["response_tokens"] == sum(i.completion_tokens for i in outcome.interactions)


async def test_trained_subagents_and_a_turn_discount(needle_video, board):
    model = ScriptedModel(main=[calls((0, 20), (20, 40)), ANSWER_A])
    trace = await graph_trace(model, board, needle_video)
    with_subs = aw.rollout_outcome(
        trace, target="A", config=ParaGRPOConfig(frame_choices=(4,), train_subagents=True)
    )
    total = with_subs.reward
    assert [i.agent for i in with_subs.interactions] == ["main", "sub:0:0", "sub:0:1", "main"]
    assert {i.reward for i in with_subs.interactions} == {total}
    discounted = aw.rollout_outcome(trace, target="A", config=FAST, discount=0.9)
    assert [i.reward for i in discounted.interactions] == [round(total * 0.9, 6), total]


def record(text: str, tokens: int = 5) -> dict[str, Any]:
    usage = Usage(prompt_tokens=100, completion_tokens=tokens)
    return Completion(text, "stop", usage, 0.1, "m", 1).to_record()


def hand_trace(texts, *, status="answered", executed=0, prefill=THINK_PREFIX) -> dict[str, Any]:
    """A trace dict in the real schema (graphs.runs.traces.Trace), main-agent calls only."""
    main = [
        {
            "agent": "main",
            "turn": turn,
            "messages": [],
            "prefill": prefill,
            "completion": record(text),
            "frames_encoded": 4,
        }
        for turn, text in enumerate(texts)
    ]
    return {
        "model_calls": main,
        "tool_calls": [{"turn": 0, "index": i, "error": None} for i in range(executed)],
        "notes": [{"turn": 0, "index": i} for i in range(executed)],
        "options": OPTIONS,
        "kind": "multiple_choice",
        "settings": {"overview_frames": 16},
        "status": status,
    }


GOOD = "The cup is red.\n</think>\n<answer>A</answer>"


@pytest.mark.parametrize(
    ("name", "trace", "target", "reward"),
    [
        ("answer only, right", hand_trace([GOOD]), "A", 2.0),
        ("answer only, wrong", hand_trace([GOOD]), "B", 1.0),
        ("endpoint failed", hand_trace([GOOD], status="failed"), "A", None),
        ("gold unreadable", hand_trace([GOOD]), "Z", None),
        ("no main turn", {**hand_trace([]), "status": "answered"}, "A", None),
    ],
)
def test_rollout_outcome_table(name, trace, target, reward):
    outcome = aw.rollout_outcome(trace, target=target)
    assert outcome.reward == reward, name
    assert all(i.reward == reward for i in outcome.interactions)
    assert outcome.stats["overview_frames"] == 16.0
    assert ("reward" in outcome.stats) is (reward is not None)


# --- data rows ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("B", "B"),
        ({"letter": "C"}, "C"),
        ({"text": "a red circle"}, "a red circle"),
        ({"start": 12, "end": 20.5}, (12.0, 20.5)),
        ([3, 7], (3.0, 7.0)),
    ],
)
def test_targets_are_normalised(target, expected):
    assert normalise_target(target) == expected


def test_rows_need_an_id_and_resolve_relative_videos():
    item = RLPrompt.from_data(
        {"id": 7, "video": "a/b.mp4", "question": "q", "target": "A"}, video_root="/data"
    )
    assert (item.id, item.video, item.options, item.epoch) == ("7", "/data/a/b.mp4", (), 0)
    assert item.kind == "open_ended"  # no options, not a window
    window = RLPrompt.from_data({"id": 1, "video": "/v.mp4", "question": "q", "target": [1, 2]})
    assert (window.kind, window.target) == ("grounding", (1.0, 2.0))
    with pytest.raises(KeyError, match="id"):
        RLPrompt.from_data({"video": "v.mp4", "question": "q", "target": "A"})


def test_load_records_probes_videos_and_writes_targets_as_text(needle_video, tmp_path):
    rows = [
        {
            "id": "mc",
            "video": needle_video.path,
            "question": "q",
            "options": OPTIONS,
            "target": {"letter": "B"},
        },
        {
            "id": "tg",
            "video": needle_video.path,
            "question": "when?",
            "kind": "grounding",
            "target": [12.5, 20],
        },
        {"id": "oe", "video": needle_video.path, "question": "what?", "target": "a red circle"},
    ]
    path = tmp_path / "rl.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    loaded = launch.load_records(path)
    assert [(r["id"], r["kind"], r["target"]) for r in loaded] == [
        ("mc", "multiple_choice", "B"),
        ("tg", "grounding", "12.500-20.000"),
        ("oe", "open_ended", "a red circle"),
    ]
    path.write_text(json.dumps({**rows[0], "video": str(tmp_path / "missing.mp4")}) + "\n")
    with pytest.raises(VideoError):
        launch.load_records(path)


# --- launcher checks ---------------------------------------------------------------------------


def test_the_shipped_config_carries_the_recipe():
    config = yaml.safe_load(CONFIG.read_text())
    grpo = aw.grpo_config(config["paravt"]["grpo"])
    assert launch.recipe_mismatches(config, grpo) == []
    assert grpo == ParaGRPOConfig()  # the block spells out the defaults, nothing else
    assert config["rollout"]["backend"].startswith("sglang:d1")  # 1 SGLang GPU
    assert config["actor"]["backend"].startswith("fsdp:d7")  # 7 FSDP GPUs
    assert config["train_dataset"]["batch_size"] % 7 == 0
    workflow, kwargs = launch.workflow_choice({**config["paravt"], "workflow": "proxy"}, {}, "m")
    assert workflow == aw.WORKFLOW and config["paravt"]["workflow"] == "engine"
    agent = aw.ParaVTAgent(**kwargs)
    assert agent.context.tool_result == "summary" and agent.context.max_turns == 3


def test_recipe_mismatches_are_named():
    config = yaml.safe_load(CONFIG.read_text())
    config["gconfig"]["temperature"] = 1.0
    config["rollout"]["agent"]["turn_discount"] = 0.9
    problems = launch.recipe_mismatches(config, ParaGRPOConfig())
    assert problems == [
        "gconfig.temperature is 1.0; PARA-GRPO needs 0.7",
        "actor.temperature is 1.0; PARA-GRPO needs 0.7",  # follows ${gconfig.temperature}
        "rollout.agent.turn_discount is 0.9; PARA-GRPO needs 1.0",
    ]


@pytest.mark.parametrize(
    ("rendered", "arm", "ok"),
    [
        (THINKING_PROMPT, "para_grpo", True),
        (INSTRUCT_PROMPT, "para_grpo", False),
        (INSTRUCT_PROMPT, "grpo", True),
        (THINKING_PROMPT, "gating", False),
    ],
)
def test_the_rollout_chat_template_must_supply_the_think_prefix(rendered, arm, ok):
    problems = launch.generation_prompt_problems(rendered, ParaGRPOConfig(arm=arm).prefill)
    assert (problems == []) is ok


def test_the_config_sets_a_non_default_admin_key_for_areal_2():
    # AReaL 2.0 refuses a non-loopback bind with "areal-admin-key" (areal/infra/utils/http.py)
    env = {}
    key = launch.ensure_admin_key(env)
    assert env[launch.ADMIN_KEY_VARIABLE] == key and len(key) >= 24 and key != "areal-admin-key"
    assert launch.ensure_admin_key(env) == key != launch.ensure_admin_key({})
    assert launch.ensure_admin_key({launch.ADMIN_KEY_VARIABLE: "mine"}) == "mine"
    rollout = yaml.safe_load(CONFIG.read_text())["rollout"]
    assert rollout["admin_api_key"] == "${oc.env:" + launch.ADMIN_KEY_VARIABLE + "}"
    assert rollout["agent"]["admin_api_key"] == "${rollout.admin_api_key}"


def test_the_engine_workflow_is_the_default_and_gets_plain_kwargs():
    config = yaml.safe_load(CONFIG.read_text())
    workflow, kwargs = launch.workflow_choice(config["paravt"], {"temperature": 0.7}, "/ckpt")
    assert workflow == "training.areal.engine.ParaVTRolloutWorkflow"
    assert kwargs["tokenizer"] == kwargs["processor"] == "/ckpt"
    assert kwargs["gconfig"] == {"temperature": 0.7} and kwargs["grpo"] == config["paravt"]["grpo"]
    assert "workflow" not in kwargs and "timeout_s" not in kwargs
    with pytest.raises(ValueError, match="engine or proxy"):
        launch.workflow_choice({"workflow": "http"}, {}, "m")
