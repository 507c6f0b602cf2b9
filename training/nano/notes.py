"""Note-to-answer rows: the main agent's turns after the notes, in a short text-only context.

The main agent's hard steps come after the notes: read what the question asks, check the
notes' needles, answer in kind. A full main-agent row (system prompt, overview frames, first
turn, notes, answer) costs some 700 tokens for a few decision tokens; these rows keep only
what those steps read: the question block, the tool responses exactly as the graph renders
them (``agents.main_turn.replies_content``), and the oracle's turns; a couple of hundred
tokens, no images. They are made from the benchmark's plans (``agents.benchmark.plan``) of
train-split seeds, without rendering a video: each window's frame times follow the graph's
own sampling rule (``oracle.window_frame_times``: ``window_timestamps``, then the nearest
frame, half up, as the decoder picks it). Per plan:

- the benchmark's three questions with its prompt, and :data:`PHRASED` other wordings
  (``training.nano.phrasing``), most as a chat asks them;
- one of those on a verified board: some notes withheld, the turn that looks again, the
  notes that came back (one withheld again now and then), and the answer;
- every fifth plan, its open question sent back by the length gate, and the kept answer.

They are mixed with the full rows all through SFT, never used alone.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from pathlib import Path

from agents import benchmark, prompts
from agents.main_turn import Reply, replies_content
from agents.protocol import parse, render_tool_responses
from agents.synthetic import QAItem, SyntheticVideo
from graphs.context import Context
from graphs.length import coverage_instruction
from training.nano import phrasing
from training.nano.intents import answer_mode, intent_of, restatement
from training.nano.off_topic import chosen as off_topic_draw
from training.nano.off_topic import off_topic as off_topic_question
from training.nano.oracle import (
    NO_SHAPES,
    WINDOWS,
    Truth,
    answer_turn,
    kept_answer,
    look_again,
    reasoning,
    window_frame_times,
    window_note,
)
from training.nano.reasoning import sightings

PHRASED = 2
#: A withheld window's chance of being withheld again when asked a second time.
WITHHELD_AGAIN = 0.2


def plan_video(seed: int) -> SyntheticVideo:
    """The video of `seed` as its plan describes it (no file is written)."""
    duration, needles = benchmark.plan(seed)
    return SyntheticVideo(
        f"needle_{seed:07d}.mp4",
        seed,
        duration,
        benchmark.FPS,
        benchmark.WIDTH,
        benchmark.HEIGHT,
        needles,
    )


def windows(video: SyntheticVideo) -> list[tuple[float, float]]:
    step = video.duration / WINDOWS
    return [(k * step, (k + 1) * step) for k in range(WINDOWS)]


def window_notes(video: SyntheticVideo) -> list[str]:
    """The oracle's notes on the main agent's four windows (quarters) of `video`."""
    return [
        window_note(video, window_frame_times(a, b, video.duration), b) for a, b in windows(video)
    ]


def grounding_items(video: SyntheticVideo) -> list[QAItem]:
    """The benchmark's grounding question about each needle of `video`.

    >>> [i.question.split(" appear")[0] for i in grounding_items(plan_video(5))]
    ['When does the green triangle', 'When does the yellow cross', 'When does the blue square']
    """
    return [benchmark.grounding_item(Path(video.path).stem, n) for n in video.needles]


def question_block(item: QAItem, chat: bool) -> str:
    """The question as the graph sends it: a chat's block, or the benchmark's prompt."""
    if chat:
        return prompts.question_text(item.question, item.options, item.kind)
    return f"{benchmark.prompt_text(item)}\n{prompts.ANSWER_TAG_INSTRUCTION}"


def _text(role: str, text: str) -> dict:
    return {"role": role, "content": [prompts.text_part(text)]}


def _replies(item: QAItem, spans: list[tuple[float, float]], notes, withheld=()) -> dict:
    replies = [
        Reply(a, b, verdict="UNSUPPORTED") if k in withheld else Reply(a, b, note=note)
        for k, ((a, b), note) in enumerate(zip(spans, notes, strict=True))
    ]
    parts = replies_content(replies, kind=item.kind, last_turn=False)
    return {"role": "user", "content": parts}


def _row(seed: int, item: QAItem, messages: list[dict], source: str) -> dict:
    return {
        "messages": messages,
        "images": [],
        "agent": "notes",
        "role": "main",
        "noise": 0.0,
        "run_id": f"notes-{seed}",
        "question_id": item.id,
        "source": source,
        "frame_labels": [],
        "colours": [],
    }


def verified_rows(
    seed: int, video: SyntheticVideo, item: QAItem, chat: bool, rng: random.Random
) -> dict:
    """A run on a verified board: some windows withheld, the look again, then the answer."""
    truth, notes, bounds = Truth(video, item, chat), window_notes(video), windows(video)
    mode = answer_mode(item, chat=chat)
    opening = restatement(intent_of(item), mode)
    withheld = [k for k, n in enumerate(notes) if rng.random() < (0.5 if n != NO_SHAPES else 0.1)]
    withheld = withheld or [rng.randrange(WINDOWS)]
    again = [k for k in withheld if rng.random() < WITHHELD_AGAIN]
    kept = [n for k, n in enumerate(notes) if k not in withheld]
    kept += [notes[k] for k in withheld if k not in again]
    messages = [
        _text("user", question_block(item, chat)),
        _replies(item, bounds, notes, withheld),
        _text("assistant", look_again(opening, [bounds[k] for k in withheld])),
        _replies(
            item,
            [bounds[k] for k in withheld],
            [notes[k] for k in withheld],
            [i for i, k in enumerate(withheld) if k in again],
        ),
        _text("assistant", answer_turn(truth, opening, sightings(kept), mode)),
    ]
    return _row(seed, item, messages, "plan-verified")


def note_rows(
    seeds: Iterable[int],
    *,
    every_needle_grounded: bool = False,
    phrased: int = PHRASED,
    extras: bool = True,
    off_topic: float = 0.0,
) -> Iterator[dict]:
    """Text-only rows per seed's video (the module's list); with `every_needle_grounded`, a
    grounding row about every needle in place of the benchmark's one (the needle between
    two others is the check's hardest pick); with `off_topic`, a question the video cannot
    answer for that share of the seeds (``training.nano.off_topic``); without `extras`,
    only the benchmark's and the phrased questions, answered after four notes."""
    for seed in seeds:
        if seed >= benchmark.SPLIT_SEEDS["test"]:
            raise ValueError(f"seed {seed} is in the test split")
        rng = random.Random(f"notes:{seed}")
        video = plan_video(seed)
        notes = window_notes(video)
        spans = sightings(notes)
        items = benchmark.questions(video, seed=seed)
        if every_needle_grounded:
            items = [i for i in items if i.kind != "grounding"] + grounding_items(video)
        asked = [(i, False) for i in items]
        asked += [(phrasing.phrased(video, rng, k), rng.random() < 0.8) for k in range(phrased)]
        # drawn apart, so every other row stays what it was without them
        extra = []
        if drawn := off_topic_draw(f"off-topic notes:{seed}", off_topic):
            extra.append((off_topic_question(video, drawn, 0), drawn.random() < 0.8))
        for item, chat in asked + extra:
            if reasoning(item, spans, chat=chat) is None:
                continue
            opening = restatement(intent_of(item), answer_mode(item, chat=chat))
            turn = answer_turn(
                Truth(video, item, chat), opening, spans, answer_mode(item, chat=chat)
            )
            messages = [
                _text("user", question_block(item, chat)),
                _text("user", render_tool_responses(notes)),
                _text("assistant", turn),
            ]
            yield _row(seed, item, messages, "plan")
        if not extras:
            continue
        item, chat = rng.choice(asked)
        yield verified_rows(seed, video, item, chat, rng)
        if seed % 5 == 0:
            yield length_gate_row(seed, video, items[-1], notes, spans)


def length_gate_row(seed: int, video: SyntheticVideo, item: QAItem, notes, spans) -> dict:
    """The open question answered, sent back by the length gate, and answered the same."""
    opening = restatement(intent_of(item), answer_mode(item, chat=False))
    first = answer_turn(Truth(video, item), opening, spans, "words")
    messages = [
        _text("user", question_block(item, False)),
        _text("user", render_tool_responses(notes)),
        _text("assistant", first),
        _text("user", coverage_instruction(Context())),
        _text("assistant", kept_answer(opening, parse(first).answer)),
    ]
    return _row(seed, item, messages, "plan-length")
