"""Runs under a release protocol next to the project's own: refusals before anything runs,
and `eval compare` across protocols on the same items."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from agents.client.llm import OpenAIChatModel
from evals.compare import compare_runs
from evals.run_labels import label_runs
from evals.runner import EvalRefused, evaluate
from evals.spec import EvalSpec
from evals.tasks import get_task
from graphs.context import Context
from testing.scripted import ScriptedServer
from tests.parity import release_episodes as E


async def _run(tmp_path, context: Context, data_dir, reply: str):
    spec = EvalSpec("videomme", str(data_dir), "scripted", asdict(context), {})
    with ScriptedServer(reply) as server:
        async with OpenAIChatModel(server.base_url, model="scripted", max_retries=0) as llm:
            return await evaluate(
                get_task("videomme"),
                spec,
                llm=llm,
                out_root=tmp_path / "runs",
                profile="paravt",
                concurrency=1,
            )


async def test_eval_compare_pairs_a_release_run_with_an_own_run(tmp_path):
    _, data_dir, _ = E.project_layout(tmp_path / "data", "videomme", "videomme")
    own = await _run(tmp_path, Context(overview_frames=8), data_dir, "<answer>A</answer>")
    release = Context(protocol="release-eval", prompt_mode="direct")
    theirs = await _run(tmp_path, release, data_dir, "<answer>B</answer>")
    report = compare_runs(own.folder, theirs.folder, profile="paravt", n_resamples=200)
    assert report["n_items"] == 1
    by_value = {c["value"]: (c["a"], c["b"]) for c in report["categories"]}
    assert by_value["short"] == (0.0, 1.0)  # A answered A, B answered the gold B
    labels = label_runs([own.folder, theirs.folder])
    assert "protocol=paravt" in labels[0] and "protocol=release-eval" in labels[1]
    assert (report["a"]["label"], report["b"]["label"]) == tuple(labels)


async def test_release_eval_on_a_task_the_release_does_not_evaluate_is_refused(tmp_path):
    spec = EvalSpec("needle", str(tmp_path), "m", asdict(Context(protocol="release-eval")), {})
    with pytest.raises(EvalRefused, match=r"no question text for needle.*--protocol paravt"):
        await evaluate(get_task("needle"), spec, llm=None, out_root=tmp_path / "runs")
    agentic = asdict(Context(protocol="release-eval", max_turns=0))
    spec = EvalSpec("videomme", str(tmp_path), "m", agentic, {})
    with pytest.raises(EvalRefused, match="needs --max-turns 1 or more"):
        await evaluate(get_task("videomme"), spec, llm=None, out_root=tmp_path / "runs")


def test_a_run_of_the_own_protocol_keeps_the_folder_it_had_before_protocols_existed():
    """Context fields added later are left out of the spec at their defaults, so its hash
    (the run folder's name) is what it was; a release protocol is another run."""
    before = {
        k: v
        for k, v in asdict(Context()).items()
        if k not in ("protocol", "prompt_mode", "video_channel")
    }
    now = EvalSpec("needle", "/d", "m", asdict(Context()), {})
    assert now.hash == EvalSpec("needle", "/d", "m", before, {}).hash
    release = EvalSpec("needle", "/d", "m", asdict(Context(protocol="release-eval")), {})
    assert release.hash != now.hash and release.context["protocol"] == "release-eval"


def test_a_served_regime_names_the_protocol_a_run_takes_unless_the_user_chose_one():
    from graphs.regime import fit_context

    regime = {"protocol": "release-eval", "default_overview_frames": 4}
    fitted, warnings = fit_context(Context(), regime)
    assert fitted.protocol == "release-eval" and warnings == []
    chosen, warnings = fit_context(Context(protocol="paravt"), regime, given={"protocol"})
    assert chosen.protocol == "paravt" and chosen.overview_frames == 64  # not the regime's 4
    assert warnings == ["protocol='paravt' (trained with 'release-eval')"]
