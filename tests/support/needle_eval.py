"""The needle task's evaluation with an oracle model: a small spec, the right answer for each
question (told apart by its first overview frame), and a model that gives it."""

from __future__ import annotations

from pathlib import Path

from agents import prompts
from agents.media import video
from evals.sample import Sample
from evals.spec import EvalSpec
from evals.tasks import get_task
from tests.support.fakes import ScriptedModel

NEEDLE = get_task("needle")


SMALL = {"n_videos": 3, "max_minutes": 1}


CONTEXT = {
    "overview_frames": 4,
    "overview_max_pixels": 4096,
    "crop_max_frames": 4,
    "crop_max_pixels": 4096,
    "max_turns": 1,
}


def spec_for(data: Path, **context) -> EvalSpec:
    return EvalSpec(
        task="needle",
        data_dir=str(data),
        model="scripted",
        context={**CONTEXT, **context},
        options=SMALL,
    )


def first_image(messages) -> str:
    return next(
        part["image_url"]["url"]
        for m in messages
        if isinstance(m["content"], list)
        for part in m["content"]
        if part.get("type") == "image_url"
    )


def overview_image(sample: Sample, max_pixels: int) -> str:
    """The data URL of the sample's first overview frame: which video a request is about."""
    info = video.probe(sample.media)
    times = video.overview_timestamps(info.duration, CONTEXT["overview_frames"])
    ref = prompts.frames_part(sample.media, times, max_pixels)
    return first_image(prompts.expand_frames([{"role": "user", "content": [ref]}]))


def oracle(data: Path, max_pixels: int = CONTEXT["overview_max_pixels"]) -> dict:
    """(first overview frame, question) -> a correct final turn, from the ground truth.
    Questions repeat across videos (the open-ended one always), so the frame tells them apart."""
    answers = {}
    for s in NEEDLE.load(data, **SMALL).samples:
        if s.kind == "grounding":
            t = s.extra["target"]
            reply = f"The event happens in the {t['start']} - {t['end']} seconds"
        else:
            reply = s.target
        key = (overview_image(s, max_pixels), s.question)
        answers[key] = f"<think>I know this.</think><answer>{reply}</answer>"
    return answers


def answer_for(answers: dict, messages) -> tuple:
    image, text = first_image(messages), all_text(messages)
    return next(key for key in answers if key[0] == image and key[1] in text)


class Crash(RuntimeError):
    """Stands for the process dying mid-run."""


def all_text(messages) -> str:
    return "\n".join(
        part.get("text", "")
        for m in messages
        for part in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
    )


class OracleModel(ScriptedModel):
    """Answers every question right, except those listed in `wrong`."""

    def __init__(self, answers: dict[str, str], wrong: set[str] = frozenset(), fail_after=None):
        super().__init__()
        self.answers, self.wrong, self.fail_after = answers, wrong, fail_after

    async def complete(self, request, *, on_text=None):
        question = answer_for(self.answers, request.wire())
        if self.fail_after is not None and len(self.requests) >= self.fail_after:
            raise Crash("killed")
        self.main = [
            "<think>no idea</think><answer>Z</answer>"
            if question in self.wrong
            else self.answers[question]
        ]
        self._main_turns = 0
        return await super().complete(request, on_text=on_text)
