"""The trained regime travels with a checkpoint: recorded, served, filled in, and warned about."""

from __future__ import annotations

import logging
import shutil
from argparse import Namespace
from dataclasses import fields

import pytest
from starlette.testclient import TestClient

from agents.client.completion import EndpointError
from agents.client.llm import OpenAIChatModel
from graphs import regime as graph_regime
from graphs.context import Context
from graphs.regime import fit_context, served_context
from serving.engine import ensure_tiny_model
from serving.regime import REGIME_FILE, Regime, read_regime, write_regime
from serving.server import create_app
from testing.scripted import ScriptedServer

NANO = Regime(overview_frames=(4, 8, 16), default_overview_frames=4, trained_on="needles")


def test_a_regime_round_trips_through_its_file(tmp_path):
    assert read_regime(tmp_path) is None
    write_regime(tmp_path, NANO)
    assert (tmp_path / REGIME_FILE).is_file()
    assert read_regime(tmp_path) == NANO
    assert NANO.max_pixels == 128 * 96


def test_the_server_shows_the_regime_in_its_models_entry(tmp_path):
    folder = tmp_path / "ckpt"
    shutil.copytree(ensure_tiny_model(0, tmp_path / "cache"), folder)
    client = TestClient(create_app(folder, served_model_name="m"))
    (entry,) = client.get("/v1/models").json()["data"]
    assert entry["id"] == "m" and "regime" not in entry  # a checkpoint without one: as before
    write_regime(folder, NANO)
    (entry,) = client.get("/v1/models").json()["data"]
    assert Regime.from_dict(entry["regime"]) == NANO


def test_knobs_the_caller_did_not_set_come_from_the_regime():
    fitted, warnings = fit_context(Context(), NANO.to_dict())
    assert warnings == []
    assert (fitted.overview_frames, fitted.overview_max_pixels, fitted.crop_max_pixels) == (
        4,
        128 * 96,
        128 * 96,
    )
    assert (fitted.crop_max_frames, fitted.max_new_tokens, fitted.summary_max_tokens) == (
        12,
        256,
        48,
    )
    assert fit_context(Context(), None) == (Context(), [])  # a server without a regime


def test_a_run_far_outside_the_regime_keeps_its_values_and_is_warned():
    asked = Context(overview_frames=64, max_new_tokens=2048)
    fitted, warnings = fit_context(
        asked, NANO.to_dict(), given={"overview_frames", "max_new_tokens"}
    )
    assert (fitted.overview_frames, fitted.max_new_tokens) == (64, 2048)
    assert fitted.overview_max_pixels == 128 * 96  # not given: the regime's
    assert warnings == [
        "64 overview frames (trained on 4, 8 and 16)",
        "max_new_tokens=2048 (trained with at most 256)",
    ]
    inside, warnings = fit_context(Context(overview_frames=16), NANO.to_dict(), {"overview_frames"})
    assert inside.overview_frames == 16 and warnings == []


async def test_a_cli_run_is_fitted_to_the_served_regime_and_warned_once(caplog):
    """The regime comes through the run's own client, so a server that wants a key (as
    vLLM's --api-key does) gets it with the model list, the first request of a run."""
    with ScriptedServer(
        "x", api_key="sk-test-key", model_fields={"regime": NANO.to_dict()}
    ) as server:
        args = Namespace(**{f.name: None for f in fields(Context)})
        args.overview_frames, args.max_new_tokens = 64, 2048
        with caplog.at_level(logging.WARNING, logger="graphs.regime"):
            async with OpenAIChatModel(server.base_url, api_key="sk-test-key") as llm:
                context = await served_context(args, Context(), llm)
    assert server.authorizations == ["Bearer sk-test-key"]  # the first GET /v1/models
    assert (context.overview_frames, context.max_new_tokens, context.crop_max_frames) == (
        64,
        2048,
        12,
    )
    (record,) = caplog.records
    assert "outside the regime the served model was trained for" in record.message
    assert "64 overview frames (trained on 4, 8 and 16)" in record.message
    assert "max_new_tokens=2048 (trained with at most 256)" in record.message


async def test_without_its_key_the_model_list_is_refused_not_ignored():
    """A 401 on the model list is the run's error, not a silently missed regime."""
    with ScriptedServer(
        "x", api_key="sk-test-key", model_fields={"regime": NANO.to_dict()}
    ) as server:
        async with OpenAIChatModel(server.base_url, api_key="wrong") as llm:
            with pytest.raises(EndpointError) as info:
                await served_context(Namespace(), Context(), llm)
    assert info.value.status == 401 and "Check api_key" in str(info.value)
    assert "wrong" not in str(info.value)


@pytest.mark.parametrize("frames", [4, 8, 16])
def test_every_trained_count_is_inside(frames):
    assert (
        graph_regime.regime_warnings(
            Context(
                overview_frames=frames,
                overview_max_pixels=12288,
                crop_max_pixels=12288,
                crop_max_frames=12,
                max_new_tokens=256,
                summary_max_tokens=48,
                max_parallel=4,
            ),
            NANO.to_dict(),
        )
        == []
    )
