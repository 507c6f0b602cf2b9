"""The study's note noise: a share of sub-agent notes misread, seeded, recorded in the spec."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from agents.misreads import misread, misreadable
from agents.requests import ModelRequest, SamplingParams
from evals.current_sample import CURRENT_SAMPLE
from evals.note_noise import NoisyNotes, split_options
from evals.study import run_study
from evals.tasks import get_task
from graphs.context import Context
from tests.support.fakes import ScriptedModel, calls

NOTE = "Seen: blue circle from 94 to 99 seconds; the circle is blue."


def sub_request(
    index: int, turn: int = 0, role: str = "sub_agent", video: str = "/v.mp4"
) -> ModelRequest:
    frames = {
        "type": "frames",
        "video": video,
        "timestamps": [90.0, 94.0, 99.0, 104.0],
        "max_pixels": 4096,
    }
    messages = [{"role": "user", "content": [frames, {"type": "text", "text": "describe"}]}]
    return ModelRequest(
        role, messages, SamplingParams(), turn=turn, call_index=index, window=(90.0, 108.0)
    )


@pytest.mark.parametrize("kind", ["colour", "shape", "time"])
def test_a_misread_changes_one_fact_everywhere_the_note_states_it(kind):
    wrong, changed = misread(NOTE, kind, random.Random(3), times=[90, 94, 99, 104], window_end=108)
    assert changed == kind and wrong != NOTE
    if kind == "colour":
        colour = wrong.split()[1]
        assert colour != "blue" and wrong.endswith(f"the circle is {colour}.")
    elif kind == "shape":
        shape = wrong.split()[2]
        assert shape != "circle" and f"the {shape} is blue" in wrong
    else:
        start, end = (float(w) for w in wrong.split(" from ")[1].split(" seconds")[0].split(" to "))
        assert end <= 94 or start >= 99, "the moved span must not overlap the right one"
        assert start in (90, 99, 104) and end in (94, 104, 108), "it moves onto the window's frames"


def test_an_empty_note_has_nothing_to_misread():
    assert not misreadable("No coloured shapes.")
    assert misread("No coloured shapes.", "colour", random.Random(0)) == (
        "No coloured shapes.",
        None,
    )


async def test_noise_misreads_only_sub_agent_notes_at_its_rate_and_is_seeded():
    fake = ScriptedModel(sub=lambda r: NOTE, verify=lambda r: NOTE)
    noisy = NoisyNotes(fake, 0.5, seed=7)
    texts = [(await noisy.complete(sub_request(i))).text for i in range(200)]
    share = sum(t != NOTE for t in texts) / len(texts)
    assert 0.35 < share < 0.65, share
    again = NoisyNotes(fake, 0.5, seed=7)
    assert [(await again.complete(sub_request(i))).text for i in range(200)] == texts
    other = NoisyNotes(fake, 0.5, seed=8)
    assert [(await other.complete(sub_request(i))).text for i in range(200)] != texts
    verifier = await NoisyNotes(fake, 1.0).complete(sub_request(0, role="verifier"))
    assert verifier.text == NOTE, "only sub-agents' notes are misread"


async def test_a_study_s_data_in_another_folder_gets_the_same_misreads():
    """The draws follow the video, not where its folder is (a temporary folder, a shard's
    copy): the same study reruns with the same noise anywhere."""
    fake = ScriptedModel(sub=lambda r: NOTE)

    async def texts(folder: str, name: str = "needle_1.mp4") -> list[str]:
        noisy = NoisyNotes(fake, 0.5, seed=2)
        return [
            (await noisy.complete(sub_request(i, video=f"{folder}/{name}"))).text for i in range(40)
        ]

    here = await texts("/data/a")
    assert here == await texts("/tmp/other/place")
    assert here != await texts("/data/a", "needle_2.mp4"), "another video draws its own"


async def test_the_same_window_asked_again_draws_again():
    fake = ScriptedModel(sub=lambda r: NOTE)
    noisy = NoisyNotes(fake, 0.5, seed=1)
    draws = [(await noisy.complete(sub_request(0))).text != NOTE for _ in range(60)]
    assert 0 < sum(draws) < 60


async def test_a_sample_draws_the_same_whichever_samples_ran_before_it():
    """Questions on one video make the same calls; each sample's draws are its own, so
    every configuration misreads a sample's call alike, in any order of arrival."""
    fake = ScriptedModel(sub=lambda r: NOTE)

    async def draws(order: list[str]) -> dict[str, list[str]]:
        noisy, out = NoisyNotes(fake, 0.5, seed=3), {}

        async def one(sample: str) -> None:
            CURRENT_SAMPLE.set(sample)
            out[sample] = [(await noisy.complete(sub_request(i))).text for i in range(30)]

        for sample in order:
            await asyncio.create_task(one(sample))
        return out

    forward, backward = await draws(["q1", "q2", "q3"]), await draws(["q3", "q2", "q1"])
    assert forward == backward
    assert forward["q1"] != forward["q2"], "each sample draws its own"


def test_the_noise_options_are_not_the_loaders():
    assert split_options({"n_videos": 2, "note_noise": 0.3, "note_noise_seed": 4}) == (
        {"n_videos": 2},
        0.3,
        4,
    )
    assert split_options({"n_videos": 2}) == ({"n_videos": 2}, 0.0, 0)
    assert split_options({"note_noise": 0.3, "note_noise_version": 2})[0] == {}
    with pytest.raises(ValueError, match="note_noise_version 1"):
        split_options({"note_noise": 0.3, "note_noise_version": 1})


class CropOnce(ScriptedModel):
    async def complete(self, request, *, on_text=None):
        first = "<tool_response>" not in str(request.messages[1:])
        self.main = [calls((0, 30)) if first else "<think>x</think><answer>A</answer>"]
        self._main_turns = 0
        return await super().complete(request, on_text=on_text)


async def test_a_noisy_study_puts_misread_notes_on_the_board_and_says_so(tmp_path):
    model = CropOnce(sub=lambda r: NOTE)
    base = Context(
        overview_frames=2,
        overview_max_pixels=4096,
        crop_max_frames=2,
        crop_max_pixels=4096,
        max_turns=1,
    )
    options = {"n_videos": 2, "max_minutes": 1, "note_noise": 1.0}
    report = await run_study(
        get_task("needle"),
        data_dir=tmp_path / "data",
        model="scripted",
        llm=model,
        out_root=tmp_path / "runs",
        configs=["single", "shared"],
        base=base,
        options=options,
        resamples=50,
    )
    assert report.parent.name == "study-needle-note_noise1"
    assert "misread with probability 1" in report.read_text()
    study = json.loads((report.parent / "study.json").read_text())
    assert study["note_noise"] == {"rate": 1.0, "seed": 0}
    spec = json.loads((tmp_path / "runs" / study["points"][0]["run"] / "spec.json").read_text())
    assert spec["options"]["note_noise"] == 1.0 and spec["options"]["note_noise_seed"] == 0
    seen = [str(r.messages[2:]) for r in model.main_requests if len(r.messages) > 2]

    assert seen and all(NOTE not in text and "Seen:" in text for text in seen), (
        "with noise 1 every sighting the main agent reads is a misread one"
    )


async def test_every_configuration_of_a_noisy_study_gets_the_same_misreads(tmp_path):
    from graphs.store.sqlite_board import Board

    model = CropOnce(sub=lambda r: NOTE)
    base = Context(
        overview_frames=2,
        overview_max_pixels=4096,
        crop_max_frames=2,
        crop_max_pixels=4096,
        max_turns=1,
    )
    options = {"n_videos": 3, "max_minutes": 1, "note_noise": 0.5}
    report = await run_study(
        get_task("needle"),
        data_dir=tmp_path / "data",
        model="scripted",
        llm=model,
        out_root=tmp_path / "runs",
        configs=["isolated", "shared"],
        base=base,
        options=options,
        resamples=50,
    )
    study = json.loads((report.parent / "study.json").read_text())
    notes = {}
    for name, run in study["runs"].items():
        board = Board(Path(run) / "board.sqlite")
        notes[name] = {
            (t["video"], t["question"]): [n["content"] for n in t["notes"]] for t in board.traces()
        }
        board.close()
    every = [n for ns in notes["isolated"].values() for n in ns]
    changed = [n for n in every if n != NOTE]
    assert changed and len(changed) < len(every), "about half are misread"
    assert notes["isolated"] == notes["shared"], "each question's calls are misread alike"
