"""The board study writes one report: table, Pareto plot, paired CIs against the baseline."""

from __future__ import annotations

import json

from evals.study import run_study
from evals.study_configs import STUDY_CONFIGS
from evals.tasks import get_task
from graphs.context import Context
from tests.support.fakes import ScriptedModel, calls

NEEDLE = get_task("needle")
SMALL = {"n_videos": 2, "max_minutes": 1}


class CropThenAnswer(ScriptedModel):
    """Crops once when it may and has not yet; answers otherwise (stateless per run)."""

    async def complete(self, request, *, on_text=None):
        messages = request.messages
        may_crop = "<tools>" in str(messages[0]) and "<tool_response>" not in str(messages[1:])
        self.main = [calls((0, 10)) if may_crop else "<think>x</think><answer>A</answer>"]
        self._main_turns = 0
        return await super().complete(request, on_text=on_text)


async def test_a_study_runs_each_configuration_and_reports(tmp_path):
    data = tmp_path / "data"
    model = CropThenAnswer()
    base = Context(
        overview_frames=2,
        overview_max_pixels=4096,
        crop_max_frames=2,
        crop_max_pixels=4096,
        max_turns=1,
    )
    report = await run_study(
        NEEDLE,
        data_dir=data,
        model="scripted",
        llm=model,
        out_root=tmp_path / "runs",
        configs=["single", "verified", "vote5"],
        base=base,
        options=SMALL,
        resamples=200,
    )
    text = report.read_text()
    assert "Against `single`" in text and "verified" in text and "vote5" in text
    assert (report.parent / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    study = json.loads((report.parent / "study.json").read_text())
    assert set(study["runs"]) == {"single", "verified", "vote5"}
    assert set(study["comparisons"]) == {"verified", "vote5"}
    costs = {p["name"]: p["cost"] for p in study["points"]}
    assert costs["vote5"] > costs["single"], "five votes cost more than one answer"
    assert costs["verified"] > costs["single"], "crops and checks cost more than no tools"
    verify_calls = [r for r in model.requests if r.is_verifier]
    assert verify_calls, "the verified configuration ran the gate"


def test_every_configuration_is_a_valid_context():
    for config in STUDY_CONFIGS.values():
        Context(**config.context)
