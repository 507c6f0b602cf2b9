"""One evaluation across hosts: `eval run --shard I/N` slices, `eval merge` joins, and the merged
run equals an unsharded one (results, samples, lmms-eval files); kill -9 of the shards loses
and duplicates nothing; bad shards and mixed specs are refused with one message."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from evals.sample import Sample
from evals.shards import Shard
from graphs.store.sqlite_board import Board
from testing.scripted import ScriptedServer
from tests.support.harness import (
    Oracle,
    accounting,
    app_command,
    app_env,
    eval_command,
    log_lines,
    needle_options,
    needle_samples,
    results,
    run_cli,
)
from tests.support.kills import kill_at_random_points

VOLATILE_SAMPLE = ("trace_id", "cost")  # a run's own ids and timings
VOLATILE_RESULTS = ("written_at", "costs", "versions", "git")
VOLATILE_LMMS = ("date", "throughput", "git_hash", "git_branch", "lmms_eval_version")


def sample(sid: str, cluster: str = "") -> Sample:
    return Sample(
        id=sid,
        media="v.mp4",
        question="q",
        prompt="q",
        kind="open_ended",
        target="A",
        cluster=cluster,
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3/2", "I must be from 1 to N"),
        ("0/4", "shards count from 1"),
        ("1/0", "from 1 to N"),
        ("2", "is not I/N"),
        ("a/b", "is not I/N"),
    ],
)
def test_bad_shards_are_refused_with_the_rule(text, message):
    with pytest.raises(ValueError, match=message):
        Shard.parse(text)


def test_every_sample_is_in_one_shard_clusters_whole_and_the_slices_never_move():
    samples = [sample(f"s{i}", cluster=f"video{i % 7}") for i in range(70)]
    samples += [sample(f"lone{i}") for i in range(30)]
    shards = [Shard(i, 4) for i in range(1, 5)]
    owners = {s.id: [sh.index for sh in shards if sh.holds(s)] for s in samples}
    assert all(len(found) == 1 for found in owners.values())
    by_cluster = {}
    for s in samples[:70]:
        by_cluster.setdefault(s.cluster, set()).add(owners[s.id][0])
    assert all(len(found) == 1 for found in by_cluster.values()), "a cluster was split"
    assert all(Counter(o[0] for o in owners.values())[sh.index] > 0 for sh in shards)
    # pinned (sha256 of the cluster): another host, another Python, a rerun slice the same way
    assert [owners[f"s{i}"][0] for i in range(7)] == [1, 2, 3, 3, 3, 2, 1]


def strip(record: dict, volatile: tuple[str, ...]) -> dict:
    return {k: v for k, v in record.items() if k not in volatile}


def lmms_files(folder: Path) -> tuple[dict, list[dict]]:
    """lmms-eval's two files, less what differs between any two runs: dates, timings, git, and
    the addresses in the callables' reprs (lmms-eval prints them as ``<function f at 0x...>``)."""
    (results_file,) = folder.glob("lmms_eval/*/*_results.json")
    (samples_file,) = folder.glob("lmms_eval/*/*_samples_*.jsonl")
    text = re.sub(r" at 0x[0-9a-f]+>", " at 0x>", results_file.read_text())
    document = strip(json.loads(text), VOLATILE_LMMS)
    document["config"]["resolved_cli_args"].pop("profile", None)
    lines = [json.loads(line) for line in samples_file.read_text().splitlines()]
    return document, lines


def shard_folders(out: Path) -> list[Path]:
    return sorted(p for p in out.glob("needle-*-shard-*") if p.is_dir())


def assert_same_run(merged: Path, clean: Path) -> None:
    assert strip(results(merged), VOLATILE_RESULTS) == strip(results(clean), VOLATILE_RESULTS)
    mine = {r["sample_id"]: strip(r, VOLATILE_SAMPLE) for r in log_lines(merged)}
    theirs = {r["sample_id"]: strip(r, VOLATILE_SAMPLE) for r in log_lines(clean)}
    assert mine == theirs
    assert [r["doc_id"] for r in log_lines(merged)] == sorted(r["doc_id"] for r in log_lines(clean))
    assert lmms_files(merged) == lmms_files(clean)


@pytest.mark.slow
@pytest.mark.integration
def test_merged_shards_equal_an_unsharded_run(tmp_path):
    options = needle_options(4)  # 12 samples in 4 clusters (videos)
    samples = needle_samples(tmp_path / "data", options)
    env = app_env(tmp_path / "home")
    with ScriptedServer(Oracle(samples, crop_first=True)) as server:

        def run(out: str, *extra: str):
            command = eval_command(
                server.base_url, tmp_path / "data", tmp_path / out, options, extra=extra
            )
            done = run_cli(command, env)
            assert done.returncode == 0, done.stderr

        run("clean")
        for i in (1, 2):
            run("sharded", "--shard", f"{i}/2")
    folders = shard_folders(tmp_path / "sharded")
    assert len(folders) == 2 and all(log_lines(f) for f in folders), "both shards ran samples"
    merged = run_cli(app_command("eval", "merge", *map(str, folders)), env)
    assert merged.returncode == 0, merged.stderr
    (clean,) = (tmp_path / "clean").glob("needle-*")
    (done,) = [p for p in (tmp_path / "sharded").glob("needle-*") if "shard" not in p.name]
    assert done.name == clean.name, "the merged run is the unsharded run's folder"
    assert_same_run(done, clean)
    board = Board(done / "board.sqlite")
    assert len(board.runs(limit=100)) == 12 and len(list(board.traces())) == 12
    assert json.loads((done / "merged.json").read_text())["shards"] == list(map(str, folders))

    again = run_cli(app_command("eval", "merge", str(folders[0])), env)
    said = " ".join(again.stderr.split())
    assert again.returncode == 2 and "shards 2/2 are missing" in said and "Traceback" not in said
    with ScriptedServer(Oracle(samples, crop_first=True)) as server:
        other = eval_command(
            server.base_url,
            tmp_path / "data",
            tmp_path / "other",
            options,
            extra=("--shard", "2/2", "--max-parallel", "3"),
        )
        assert run_cli(other, env).returncode == 0
    (mixed,) = shard_folders(tmp_path / "other")
    nowhere = tmp_path / "refused"
    refused = run_cli(
        app_command("eval", "merge", "--out", str(nowhere), str(folders[0]), str(mixed)), env
    )
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 2 and "different specs" in said and "Traceback" not in said
    assert said.count("error:") == 1 and not nowhere.exists(), "nothing was written"


@pytest.mark.slow
@pytest.mark.integration
def test_kill_9_of_sharded_runs_loses_and_duplicates_nothing(tmp_path):
    options = needle_options(8)  # 24 samples in 8 clusters, 12 in each of 2 shards
    samples = needle_samples(tmp_path / "data", options)
    env = app_env(tmp_path / "home")
    oracle = Oracle(samples, crop_first=True)
    with ScriptedServer(oracle) as fast:
        clean = run_cli(
            eval_command(fast.base_url, tmp_path / "data", tmp_path / "clean", options), env
        )
    assert clean.returncode == 0, clean.stderr
    rng = random.Random(38)
    with ScriptedServer(oracle, latency_s=0.3) as server:
        for i in (1, 2):
            out = tmp_path / f"host{i}"  # each shard on its own "host" (results root)
            command = eval_command(
                server.base_url, tmp_path / "data", out, options, extra=("--shard", f"{i}/2")
            )
            mine = [s for s in samples if Shard(i, 2).holds(s)]
            assert len(mine) == 12
            kill_at_random_points(command, env, server, out, rng, kills=3)
            assert run_cli(command, env).returncode == 0
            (folder,) = shard_folders(out)
            assert accounting(folder, mine) == {
                "samples": len(mine),
                "lost": 0,
                "duplicated": 0,
                "unparseable_lines": 0,
                "error_lines": 0,
            }
    folders = [shard_folders(tmp_path / f"host{i}")[0] for i in (1, 2)]
    merged = run_cli(
        app_command("eval", "merge", "--out", str(tmp_path / "merged"), *map(str, folders)), env
    )
    assert merged.returncode == 0, merged.stderr
    (done,) = (tmp_path / "merged").glob("needle-*")
    (reference,) = (tmp_path / "clean").glob("needle-*")
    assert accounting(done, samples)["lost"] == 0
    assert Counter(r["sample_id"] for r in log_lines(done)) == {s.id: 1 for s in samples}
    got, want = results(done), results(reference)
    assert got["metrics"] == want["metrics"] and got["per_item"] == want["per_item"]
    assert got["counts"] == want["counts"]
    board = Board(done / "board.sqlite")
    assert "running" not in {run["status"] for run in board.runs(limit=1000)}
