"""Questions a needle video cannot answer, in many wordings: the honest answer's training set.

The phrasing grammar (``training.nano.phrasing``) asks such a question in 14 fixed wordings,
and the nano learnt those, not the idea: asked "which ... was this ... in?" in words it never
saw, it describes the video instead of saying what it can see. This grammar composes its
questions from parts: a frame about some thing (``What is the {thing} doing?``) times the
things a real video might show, plus questions about the whole recording. Nothing here asks
about colours, shapes, times, counts or order, the words every answerable intent keys on.

The held-out phrasing set (``bench/nano_phrasings.py``) is never read here. Its off-topic
wordings were seen when this was written, so their content words stay out of this grammar
(:data:`KEPT_OUT`; ``tests/training/nano/test_nano_off_topic.py`` checks it): the set
measures whether the nano generalises from other words, not whether it learnt its words.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from agents.synthetic import QAItem, SyntheticVideo
from training.nano import phrasing
from training.nano.data import OVERVIEW_FRAMES, Job

#: Things a video might show; a needle video shows none of them.
THINGS = (
    "dog",
    "cat",
    "car",
    "woman",
    "child",
    "bird",
    "boat",
    "horse",
    "phone",
    "teacher",
    "player",
    "driver",
    "baby",
    "girl",
    "boy",
    "chef",
)
#: Frames about one thing.
ABOUT_A_THING = (
    "What is the {thing} doing?",
    "Why is the {thing} there?",
    "Where is the {thing} going?",
    "What is the name of the {thing}?",
    "How old is the {thing}?",
    "Who owns the {thing}?",
    "Is the {thing} happy?",
    "What does the {thing} want?",
    "How fast is the {thing}?",
    "Tell me what the {thing} is doing.",
    "Say why the {thing} stops.",
    "Explain where the {thing} comes from.",
    "Does the {thing} look tired?",
    "What happened to the {thing}?",
)
#: Questions about the recording as a whole.
ABOUT_THE_RECORDING = (
    "What country is this?",
    "What year was the video made?",
    "Who made this video?",
    "What is the title of this video?",
    "Is anyone singing?",
    "Which instrument is playing?",
    "What does the narrator say?",
    "What are the people eating?",
    "What sport is being played?",
    "Which team wins?",
    "What is the score?",
    "Is this a movie or a documentary?",
    "What camera was used?",
    "What is the mood of the scene?",
    "What are they talking about?",
    "Whose house is this?",
    "What smell would this place have?",
    "Tell me the plot.",
    "Name the actors.",
    "Give the address of the building.",
    "In which country is this?",
    "What season is it in the clip?",
    "What do they sell in the video?",
    "What are the people doing in this clip?",
    "Which song do they play in the video?",
    "What is the woman wearing?",
    "How much does the ticket cost?",
    "What did the reporter ask?",
    "Which street is this?",
    "Is the audience clapping?",
)
#: Content words of the held-out set's off-topic wordings that no training question uses.
KEPT_OUT = ("city", "filmed", "language", "speak", "loud", "holding", "weather")


def templates() -> tuple[str, ...]:
    """Every wording, each thing in every frame, then the whole-recording questions."""
    per_thing = tuple(f.format(thing=t) for f in ABOUT_A_THING for t in THINGS)
    return per_thing + ABOUT_THE_RECORDING


def draw(rng: random.Random) -> str:
    """A wording: about a thing or about the recording, even odds (the things' frames would
    outnumber the recording's questions seven to one)."""
    if rng.random() < 0.5:
        return rng.choice(ABOUT_A_THING).format(thing=rng.choice(THINGS))
    return rng.choice(ABOUT_THE_RECORDING)


def off_topic(video: SyntheticVideo, rng: random.Random, index: int) -> QAItem:
    """One question `video` cannot answer, drawn and decorated as the phrasing grammar
    decorates its questions (words around it, casing, closing mark); never with options.
    Its id (``...-o{index}-unknown``) is apart from the phrased questions' ids."""
    item = phrasing.phrased(video, rng, index, group="unknown", options=False, template=draw(rng))
    return replace(item, id=f"{Path(video.path).stem}-o{index}-unknown")


def chosen(seed_text: str, share: float) -> random.Random | None:
    """The draw of one off-topic question, or None: `share` of the seeds get one."""
    rng = random.Random(seed_text)
    return rng if share >= 1 or rng.random() < share else None  # at 1, no draw is needed


def jobs(videos, share: float, *, frames=OVERVIEW_FRAMES) -> list[Job]:
    """An off-topic question about `share` of `videos` (``train_videos``' triples), run as the
    data stage runs its phrased questions, drawn by the video's own seed."""
    out = []
    for noise, video, _ in videos:
        if rng := chosen(f"off-topic:{video.seed}", share):
            item, overview = off_topic(video, rng, 0), rng.choice(frames)
            out.append(Job(video, item, noise, "parallel", overview, chat=rng.random() < 0.8))
    return out
