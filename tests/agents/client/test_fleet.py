"""Several endpoints as one model (agents.client.fleet): least in flight first, failover to another
replica, a dead replica rested, a refused request not sent again; real HTTP throughout."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from agents.client.completion import EndpointError
from agents.client.fleet import EndpointFleet
from agents.client.llm import OpenAIChatModel
from agents.requests import ModelRequest
from graphs.settings import Settings
from serving.launch import free_port
from testing.scripted import Reply, ScriptedServer
from tests.support.harness import (
    Oracle,
    app_env,
    eval_command,
    needle_options,
    needle_samples,
    results,
    run_cli,
    run_folder,
)


def request() -> ModelRequest:
    return ModelRequest(role="main", messages=[{"role": "user", "content": "hi"}])


def fleet_of(*urls: str, retries: int = 0) -> EndpointFleet:
    return EndpointFleet(
        [OpenAIChatModel(u, max_retries=retries, backoff_s=0.01, timeout=5) for u in urls]
    )


async def test_requests_go_to_the_endpoint_with_fewest_in_flight():
    servers = [ScriptedServer("A", latency_s=0.3).start() for _ in range(4)]
    fleet = fleet_of(*(s.base_url for s in servers))
    try:
        done = await asyncio.gather(*(fleet.complete(request()) for _ in range(12)))
        assert {c.text for c in done} == {"A"}
        assert [len(s.requests) for s in servers] == [3, 3, 3, 3]
        slow = ScriptedServer("B", latency_s=1.0).start()
        servers.append(slow)
        mixed = fleet_of(servers[0].base_url, slow.base_url)
        before = len(servers[0].requests)
        await asyncio.gather(*(mixed.complete(request()) for _ in range(2)))
        first = asyncio.gather(*(mixed.complete(request()) for _ in range(2)))
        await asyncio.sleep(0.5)  # the fast one is free again; the slow one still busy
        await mixed.complete(request())
        await first
        assert len(servers[0].requests) - before == 3 and len(slow.requests) == 2
        await mixed.aclose()
    finally:
        await fleet.aclose()
        for server in servers:
            server.stop()


async def test_a_failing_endpoint_is_retried_elsewhere_and_rested():
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens: connection refused
    with (
        ScriptedServer(Reply("overloaded", status=503)) as busy,
        ScriptedServer("fine") as good,
    ):
        fleet = fleet_of(dead, busy.base_url, good.base_url)
        for _ in range(6):
            assert (await fleet.complete(request())).text == "fine"
        assert len(good.requests) == 6
        assert len(busy.requests) == 1, "a failed endpoint rests before it is tried again"
        await fleet.aclose()


async def test_a_refused_request_is_not_sent_to_another_replica_and_all_failing_says_so():
    with (
        ScriptedServer(Reply("bad image", status=400)) as one,
        ScriptedServer(Reply("bad image", status=400)) as two,
    ):
        fleet = fleet_of(one.base_url, two.base_url)
        with pytest.raises(EndpointError, match="HTTP 400"):
            await fleet.complete(request())
        assert len(one.requests) + len(two.requests) == 1
        await fleet.aclose()
    dead = [f"http://127.0.0.1:{free_port()}/v1" for _ in range(2)]
    fleet = fleet_of(*dead)
    with pytest.raises(EndpointError, match="every endpoint failed") as failed:
        await fleet.complete(request())
    assert all(url in str(failed.value) for url in dead)
    await fleet.aclose()


def test_settings_read_several_endpoints_from_flags_or_one_variable(monkeypatch):
    import app

    parser = app.build_parser()
    args = parser.parse_args(["--endpoint", "http://a/v1", "--endpoint", "http://b/v1", "board"])
    assert args.endpoint == ["http://a/v1", "http://b/v1"]
    after = parser.parse_args(["--endpoint", "http://x/v1", "board", "--endpoint", "http://a/v1"])
    assert after.endpoint == "http://a/v1", "as every global flag: after the command wins"
    many = Settings.load(env_file=None, endpoint=["http://a/v1", "http://b/v1"])
    assert many.endpoints == ("http://a/v1", "http://b/v1")
    assert isinstance(many.chat_model(), EndpointFleet)
    monkeypatch.setenv("PARAVT_ENDPOINT", "http://a/v1, http://b/v1,http://c/v1")
    assert Settings.load(env_file=None).endpoints == ("http://a/v1", "http://b/v1", "http://c/v1")
    one = Settings.load(env_file=None, endpoint=["http://d/v1"])
    assert one.endpoints == ("http://d/v1",) and isinstance(one.chat_model(), OpenAIChatModel)


@pytest.mark.integration
def test_eval_run_over_two_endpoints_uses_both_and_survives_one_dying(tmp_path):
    options = needle_options(2)
    samples = needle_samples(tmp_path / "data", options)
    oracle = Oracle(samples, crop_first=True)
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with ScriptedServer(oracle, latency_s=0.05) as one, ScriptedServer(oracle) as two:
        command = eval_command(one.base_url, tmp_path / "data", tmp_path / "out", options)
        at = command.index("--endpoint") + 2  # every --endpoint on one side of the command
        command[at:at] = ["--endpoint", two.base_url, "--endpoint", dead]
        done = run_cli(command, app_env(tmp_path / "home"))
        served = Counter({"one": len(one.requests), "two": len(two.requests)})
    assert done.returncode == 0, done.stderr
    assert served["one"] > 0 and served["two"] > 0
    assert results(run_folder(tmp_path / "out"))["counts"]["errors"] == 0
