"""Note-to-answer rows: the main agent's last turn after the notes, in a short text-only context.

The main agent's hard step is a lookup: find the note that names what the question asks
about, copy the value, find the option that holds it. A small transformer learns such
lookups only after tens of thousands of examples, and a full main-agent row (system prompt,
overview frames, first turn, notes, answer) costs some 700 tokens for three decision tokens.
These rows keep only what the lookup reads: the question block, the tool responses exactly
as the graph renders them, and the oracle's last turn; about 130 tokens, no images. They are
made from the benchmark's plans (``agents.benchmark.plan``) of train-split seeds, without
rendering a video: each window's frame times follow the graph's own sampling rule
(``agents.media.sampling.window_timestamps``, then the nearest frame, half up, as the decoder
picks it). They are mixed with the full rows all through SFT, never used alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from pathlib import Path

from agents import benchmark, prompts
from agents.media.sampling import window_timestamps
from agents.protocol import render_tool_responses, render_turn
from agents.synthetic import QAItem, SyntheticVideo
from training.nano.oracle import WINDOWS, reasoning, sightings, window_note


def frame_times(start: float, end: float, duration: float) -> list[float]:
    """The times of the frames a sub-agent sees in [start, end), as the decoder returns them.

    >>> frame_times(0, 15, 60)[:5]
    [1.0, 2.0, 3.0, 4.0, 6.0]
    """
    targets = window_timestamps(
        start, end, fps=benchmark.FPS, max_frames=benchmark.GRAPH_SETTINGS["crop_max_frames"]
    )
    return [min(float(math.floor(t * benchmark.FPS + 0.5)), duration - 1) for t in targets]


def plan_video(seed: int) -> SyntheticVideo:
    """The video of `seed` as its plan describes it (no file is written)."""
    duration, needles = benchmark.plan(seed)
    return SyntheticVideo(
        f"needle_{seed:07d}.mp4", seed, duration, benchmark.FPS, benchmark.WIDTH,
        benchmark.HEIGHT, needles,
    )  # fmt: skip


def window_notes(video: SyntheticVideo) -> list[str]:
    """The oracle's notes on the main agent's four windows (quarters) of `video`."""
    step = video.duration / WINDOWS
    return [
        window_note(video, frame_times(k * step, (k + 1) * step, video.duration), (k + 1) * step)
        for k in range(WINDOWS)
    ]


def grounding_items(video: SyntheticVideo) -> list[QAItem]:
    """The benchmark's grounding question about each needle of `video`.

    >>> [i.question.split(" appear")[0] for i in grounding_items(plan_video(5))]
    ['When does the green triangle', 'When does the yellow cross', 'When does the blue square']
    """
    return [benchmark.grounding_item(Path(video.path).stem, n) for n in video.needles]


def note_rows(seeds: Iterable[int], *, every_needle_grounded: bool = False) -> Iterator[dict]:
    """One text-only row per question of each seed's video: question, notes, last turn; with
    `every_needle_grounded`, a grounding row about every needle in place of the benchmark's
    one (the needle between two others is the check's hardest pick)."""
    for seed in seeds:
        if seed >= benchmark.SPLIT_SEEDS["test"]:
            raise ValueError(f"seed {seed} is in the test split")
        video = plan_video(seed)
        notes = window_notes(video)
        spans = sightings(notes)
        items = benchmark.questions(video, seed=seed)
        if every_needle_grounded:
            items = [i for i in items if i.kind != "grounding"] + grounding_items(video)
        for item in items:
            found = reasoning(item, spans)
            if found is None:
                continue
            question = f"{benchmark.prompt_text(item)}\n{prompts.ANSWER_TAG_INSTRUCTION}"
            messages = [
                {"role": "user", "content": [prompts.text_part(question)]},
                {"role": "user", "content": [prompts.text_part(render_tool_responses(notes))]},
                {
                    "role": "assistant",
                    "content": [prompts.text_part(render_turn(found[0], answer=found[1]))],
                },
            ]
            yield {"messages": messages, "images": [], "agent": "notes", "noise": 0.0,
                   "run_id": f"notes-{seed}", "question_id": item.id, "source": "plan",
                   "frame_labels": [], "colours": []}  # fmt: skip
