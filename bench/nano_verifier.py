"""The verifier on held-out videos: does the verify gate accept right notes and reject wrong ones?

For each quarter window of test-split videos (the windows the main agent asks for), the
graph's own verifier request (``agents.sub_turn.verifier_request``: the window's frames, the
video's multiple-choice question, the note) is sent with three kinds of note:

- the right note: what the oracle's sub-agent writes for those frames
  (``training.nano.oracle.window_note``), with a needle or ``No coloured shapes.``;
- for a window that shows a needle, the same note with one fact misread
  (``agents.misreads``): its colour, its shape, or its time (moved to frames that do not
  show it).

A note passes the gate only when the verdict is SUPPORTED, so a wrong note counts as
rejected when the verdict is anything else (UNSUPPORTED, UNCERTAIN, or unreadable).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from pathlib import Path

from nano_asking import quarter_windows, test_videos

from agents.misreads import KINDS, misread
from agents.sub_turn import Window, verifier_request
from agents.verify import parse_verdict
from training.nano.oracle import frame_times, window_note


def window_cases(video, rng: random.Random) -> list[tuple[str, Window, dict, str]]:
    """(case, window, frames, note) for each quarter of `video`: "right_needle" or
    "right_empty", and one "<kind>" case per misread of a needle's note."""
    cases = []
    for window, frames in quarter_windows(video):
        probe = verifier_request(window, frames, question="", claim="")
        times = frame_times(probe.wire()[-1])
        note = window_note(video, times, window.end)
        has_needle = note.startswith("Seen:")
        cases.append(("right_needle" if has_needle else "right_empty", window, frames, note))
        if has_needle:
            for kind in KINDS:
                wrong, changed = misread(note, kind, rng, times=times, window_end=window.end)
                if changed:
                    cases.append((kind, window, frames, wrong))
    return cases


async def verifier_report(
    llm, data_dir: Path, *, n_videos: int = 40, seed: int = 0, concurrency: int = 4
) -> dict:
    """Accept rates of right notes and reject rates of misread ones, with every verdict."""
    from agents import benchmark

    rng = random.Random(seed)
    videos = test_videos(data_dir, n_videos)
    gate = asyncio.Semaphore(concurrency)

    async def one(video, case, window, frames, note) -> dict:
        question = next(
            i for i in benchmark.questions(video, seed=video.seed) if i.kind == "multiple_choice"
        ).question
        request = verifier_request(window, frames, question=question, claim=note)
        await asyncio.to_thread(request.prepare)
        async with gate:
            completion = await llm.complete(request)
        verdict, clean = parse_verdict(completion.text)
        where = [window.start, window.end]
        return {
            "video": video.seed,
            "window": where,
            "case": case,
            "note": note,
            "reply": completion.text,
            "verdict": verdict,
            "clean": clean,
        }

    jobs = [one(v, *c) for v in videos for c in window_cases(v, rng)]
    records = list(await asyncio.gather(*jobs))
    counts, passed = Counter(r["case"] for r in records), Counter()
    for r in records:
        passed[r["case"]] += r["verdict"] == "SUPPORTED"
    rate = lambda n, d: round(n / d, 4) if d else None  # noqa: E731
    right = ("right_needle", "right_empty")
    wrong_n = sum(counts[k] for k in KINDS)
    return {
        "windows": sum(counts[k] for k in right),
        "accepts_right_notes": rate(sum(passed[k] for k in right), sum(counts[k] for k in right)),
        "accepts_right_notes_with_a_needle": rate(passed["right_needle"], counts["right_needle"]),
        "accepts_right_empty_notes": rate(passed["right_empty"], counts["right_empty"]),
        "rejects_wrong_notes": rate(wrong_n - sum(passed[k] for k in KINDS), wrong_n),
        "rejects_by_misread": {k: rate(counts[k] - passed[k], counts[k]) for k in KINDS},
        "counts": dict(counts),
        "verdicts": dict(Counter(r["verdict"] for r in records)),
        "unreadable_replies": sum(not r["clean"] for r in records),
        "records": records,
    }
