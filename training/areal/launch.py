"""Launch PARA-GRPO on AReaL: recipe and chat-template checks, data loading, the trainer.

    python -m training.areal.launch --config training/configs/areal_para_grpo.yaml

Runs only in the separate AReaL environment (docs/areal.md); AReaL is imported lazily.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import os
import re
import secrets
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.media import video
from training.areal.workflow import WORKFLOW, _require_areal, grpo_config
from training.para_grpo import ParaGRPOConfig
from training.questions import RLPrompt

#: AReaL config path -> the value PARA-GRPO needs there, from its settings (one registry).
RECIPE: dict[str, Callable[[ParaGRPOConfig], Any]] = {
    "gconfig.n_samples": lambda g: g.group_size,
    "gconfig.temperature": lambda g: g.temperature,
    "actor.temperature": lambda g: g.temperature,  # logprobs are recomputed at this temperature
    "gconfig.max_new_tokens": lambda g: g.max_new_tokens,
    "actor.optimizer.lr": lambda g: g.learning_rate,
    "actor.optimizer.gradient_clipping": lambda g: g.grad_clip,
    "actor.eps_clip": lambda g: g.clip_eps,
    "actor.kl_ctl": lambda g: g.kl_coef,
    "actor.reward_norm.mean_level": lambda g: "group",
    "actor.reward_norm.std_level": lambda g: "group" if g.scale_std else None,
    "rollout.agent.turn_discount": lambda g: 1.0,  # every main-agent turn gets the reward
    "rollout.agent.export_style": lambda g: "individual",
}
ADMIN_KEY_VARIABLE = "PARAVT_AREAL_ADMIN_KEY"
_REFERENCE = re.compile(r"^\$\{([\w.]+)\}$")


def recipe_mismatches(config: Any, grpo: ParaGRPOConfig) -> list[str]:
    """Where an AReaL config (object or nested mapping) disagrees with the PARA-GRPO settings.

    ``${a.b}`` references are followed, so the YAML file can be checked as well as the object.
    """
    problems = []
    for path, needed in RECIPE.items():
        got, want = _lookup(config, path), needed(grpo)
        if got != want:
            problems.append(f"{path} is {got!r}; PARA-GRPO needs {want!r}")
    return problems


def _lookup(config: Any, path: str, depth: int = 0) -> Any:
    value = config
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else getattr(value, key, None)
    match = _REFERENCE.match(value) if isinstance(value, str) else None
    return _lookup(config, match.group(1), depth + 1) if match and depth < 8 else value


def generation_prompt_problems(rendered: str, prefill: str | None) -> list[str]:
    """Does the rollout chat template end its generation prompt as the arm needs?

    ``rendered``: one user message rendered with ``add_generation_prompt=True``.
    """
    ends = bool(prefill) and rendered.endswith(prefill)
    opens = rendered.rstrip().endswith("<think>")
    if prefill and not ends:
        return [f"the rollout chat template must end its generation prompt with {prefill!r}"]
    if not prefill and opens:
        return ["this arm has no Think Prefix but the rollout chat template opens <think>"]
    return []


def grouping_problems(grpo: ParaGRPOConfig, areal_version: str) -> list[str]:
    """Would AReaL's group statistics mix prompts? AReaL 1.x normalises rewards over fixed
    slices of G rows (``areal.utils.data.Normalization``), which keep to one prompt only while
    every episode is one row; sub-agent rows make an episode several."""
    major = int(re.match(r"\d+", areal_version).group())  # type: ignore[union-attr]
    if major < 2 and grpo.train_subagents:
        return [
            f"paravt.grpo.train_subagents needs AReaL >= 2.0 (per-prompt group statistics, "
            f"areal-project/AReaL#1454): AReaL {areal_version} normalises rewards over fixed "
            f"slices of G rows, and the sub-agent rows would put two prompts in one slice"
        ]
    return []


def load_records(path: str | Path, video_root: str | None = None) -> list[dict[str, Any]]:
    """JSONL rows (id, video, question, options, kind, target) for AReaL's dataset, every video
    probed now (a missing one fails before training starts); targets become text for Arrow."""
    rows = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = RLPrompt.from_data(json.loads(line), video_root)
            except (ValueError, KeyError) as exc:
                raise ValueError(f"{path}:{number}: {exc}") from exc
            video.probe(item.video)
            target = item.target
            rows.append(
                {
                    "id": item.id,
                    "video": item.video,
                    "question": item.question,
                    "options": list(item.options),
                    "kind": item.kind,
                    "target": f"{target[0]:.3f}-{target[1]:.3f}"
                    if isinstance(target, tuple)
                    else target,
                    "prompt": item.prompt or "",
                }
            )
    if not rows:
        raise ValueError(f"{path}: no rows")
    return rows


def __getattr__(name: str) -> Any:
    """``ParaVTAReaLConfig`` (AReaL's GRPOConfig plus the ``paravt`` block) exists only where
    AReaL does; built on first use, importable by name so AReaL can pickle the config."""
    if name != "ParaVTAReaLConfig":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _require_areal()
    from areal.api.cli_args import GRPOConfig

    @dataclass
    class ParaVTAReaLConfig(GRPOConfig):
        paravt: dict[str, Any] = field(default_factory=dict)  # ParaVTAgent keyword arguments

    ParaVTAReaLConfig.__qualname__ = name
    globals()[name] = ParaVTAReaLConfig
    return ParaVTAReaLConfig


def workflow_choice(paravt: dict[str, Any], gconfig: Any, tokenizer_path: str):
    """(import path, workflow_kwargs) for the config's ``paravt.workflow``: ``engine`` (the
    default, as the ParaVT release: frames through ``engine.agenerate``) or ``proxy`` (the
    graph's HTTP client on AReaL's OpenAI proxy; text-only on released AReaL)."""
    paravt = dict(paravt)
    kind = paravt.pop("workflow", "engine")
    if kind == "proxy":
        return WORKFLOW, paravt
    if kind != "engine":
        raise ValueError(f"paravt.workflow is {kind!r}: engine or proxy")
    from training.areal.engine import WORKFLOW as ENGINE_WORKFLOW  # torch: only when chosen

    keep = ("grpo", "context", "video_root", "board_path")
    kwargs = {k: paravt[k] for k in keep if k in paravt}
    return ENGINE_WORKFLOW, {
        **kwargs,
        "gconfig": gconfig,
        "tokenizer": tokenizer_path,
        "processor": tokenizer_path,
    }


def ensure_admin_key(env=os.environ) -> str:
    """The admin key the config reads (``PARAVT_AREAL_ADMIN_KEY``): kept if set, else a fresh
    secret, exported so that AReaL's workers inherit it."""
    return env.setdefault(ADMIN_KEY_VARIABLE, secrets.token_urlsafe(24))


def main(argv: list[str] | None = None) -> None:
    """``python -m training.areal.launch --config training/configs/areal_para_grpo.yaml``."""
    _require_areal()
    from areal import PPOTrainer
    from areal.api.cli_args import load_expr_config
    from areal.experimental.openai import ArealOpenAI
    from datasets import Dataset
    from transformers import AutoTokenizer

    import training.areal.launch as canonical  # under -m this file also runs as __main__

    argv = sys.argv[1:] if argv is None else argv
    ensure_admin_key()
    config, _ = load_expr_config(argv, canonical.ParaVTAReaLConfig)
    workflow, workflow_kwargs = workflow_choice(
        dict(config.paravt), config.gconfig, config.rollout.tokenizer_path
    )
    grpo = grpo_config(workflow_kwargs.get("grpo") or {})
    problems = recipe_mismatches(config, grpo)
    proxy = workflow == WORKFLOW
    if proxy and "processor" not in inspect.signature(ArealOpenAI.__init__).parameters:
        problems.append(
            "this AReaL's proxy exports no image tensors with agent trajectories "
            "(areal-project/AReaL#1606): use paravt.workflow engine, or an AReaL that has it"
        )
    tokenizer = AutoTokenizer.from_pretrained(config.rollout.tokenizer_path)
    probe = [{"role": "user", "content": "?"}]
    rendered = tokenizer.apply_chat_template(probe, tokenize=False, add_generation_prompt=True)
    problems += generation_prompt_problems(rendered, grpo.prefill)
    problems += grouping_problems(grpo, importlib.metadata.version("areal"))
    if problems:
        raise SystemExit("areal_para_grpo: " + "; ".join(problems))
    rows = load_records(config.train_dataset.path, workflow_kwargs.get("video_root"))
    with PPOTrainer(config, train_dataset=Dataset.from_list(rows)) as trainer:
        trainer.train(workflow=workflow, workflow_kwargs=workflow_kwargs)


if __name__ == "__main__":
    main()
