"""Fixtures of the AReaL workflow tests: the tiny model's renderer and one needle prompt.

They import what needs torch (serving.engine, training.rollout) when they run, so the tests
here that need no torch (the proxy path, the workflow without AReaL) collect without it."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def renderer():
    from transformers import AutoConfig, AutoImageProcessor, AutoTokenizer

    from serving.engine import ChatRenderer, ensure_tiny_model

    model = ensure_tiny_model(seed=0)
    return ChatRenderer(
        AutoTokenizer.from_pretrained(model),
        AutoImageProcessor.from_pretrained(model),
        AutoConfig.from_pretrained(model).image_token_id,
    )


@pytest.fixture(scope="module")
def prompt(tmp_path_factory):
    from training.rollout import needle_prompts

    prompts = needle_prompts(tmp_path_factory.mktemp("needles"), n_videos=1, duration=20.0)
    return next(p for p in prompts if p.kind == "multiple_choice")
