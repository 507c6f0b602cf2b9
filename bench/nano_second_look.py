"""The sub-agent on the verify gate's second look: the same windows at their usual frames and
at the frames between them (``agents.media.sampling.between_times``).

    OMP_NUM_THREADS=2 .venv/bin/python bench/nano_second_look.py --videos 20

For each quarter window of test-split videos (the windows the main agent asks for), the
sub-agent's request (the run protocol's, as the graph sends it) is sent twice: with the
window's usual frames and with the frames halfway between them. Each note is held against
the oracle's note for the frames it saw (``training.nano.oracle.window_note``) by the eval's
diagnosis (``nano_diagnosis.note_counts``): colour and shape found, spans exact and within
one frame, and how many of the spans a note states lie in order inside its window; the same
again by how far apart the window's frames are (``by_frame_step``). Writes
``nano_second_look.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from nano_asking import CONTEXT, quarter_windows, test_videos  # noqa: E402
from nano_diagnosis import note_counts  # noqa: E402

from agents.client.llm import OpenAIChatModel  # noqa: E402
from agents.media import frame_store  # noqa: E402
from agents.media.sampling import between_times  # noqa: E402
from agents.protocols import get_protocol  # noqa: E402
from agents.sub_turn import Window  # noqa: E402
from graphs.runs.offload import prepare_request  # noqa: E402
from serving.launch import local_server  # noqa: E402
from training.nano.oracle import window_note  # noqa: E402
from training.nano.reasoning import sightings  # noqa: E402

LOOKS = ("first", "between")
#: The bands of ``by_frame_step``: (the longest step between a window's frames, in seconds,
#: and the band's name).
STEP_BANDS = ((2.0, "up to 2 s"), (5.0, "2 to 5 s"), (math.inf, "over 5 s"))


def step_band(start: float, end: float, n_frames: int) -> str:
    """The band of the step between a window's frames (:data:`STEP_BANDS`).

    >>> step_band(0.0, 15.0, 12), step_band(0.0, 60.0, 12), step_band(120.0, 240.0, 12)
    ('up to 2 s', '2 to 5 s', 'over 5 s')
    """
    step = (end - start) / n_frames
    return next(name for top, name in STEP_BANDS if step <= top)


def count_spans_inside(counts: Counter, note: str, start: float, end: float) -> None:
    """Count the spans `note` states and those in order inside the window [start, end].

    >>> c = Counter()
    >>> count_spans_inside(c, "Seen: red circle from 235 to 98 seconds; the circle is red.",
    ...                    180.0, 240.0)
    >>> count_spans_inside(c, "Seen: red circle from 190 to 200 seconds; the circle is red.",
    ...                    180.0, 240.0)
    >>> c["spans_stated"], c["spans_inside"]
    (2, 1)
    """
    for a, b in sightings([note]).values():
        counts["spans_stated"] += 1
        counts["spans_inside"] += start <= a <= b <= end


def look_frames(video) -> list[tuple[str, Window, dict]]:
    """(look, window, frame reference) for each quarter of `video`, at its usual frames and at
    the frames between them."""
    looks = []
    for window, first in quarter_windows(video):
        between = {**first, "timestamps": between_times(first["timestamps"], window.end)}
        looks += [("first", window, first), ("between", window, between)]
    return looks


def rates(counts: Counter) -> dict:
    """The diagnosis's sub-agent rates of one look.

    >>> rates(Counter(windows=4, notes_exact=2, needles=2, found_red=2, needle_span_exact=1))
    ... # doctest: +NORMALIZE_WHITESPACE
    {'windows': 4, 'needles': 2, 'note_exact': 0.5, 'false_needle_rate': 0.0,
     'colour_found': 1.0, 'shape_right': 0.0, 'span_exact': 0.5, 'span_within_one_frame': 0.0,
     'spans_inside_window': None}
    """
    rate = lambda a, b: round(counts[a] / counts[b], 4) if counts[b] else None  # noqa: E731
    found = sum(v for k, v in counts.items() if k.startswith("found_"))
    return {
        "windows": counts["windows"],
        "needles": counts["needles"],
        "note_exact": rate("notes_exact", "windows"),
        "false_needle_rate": rate("false_needles", "windows"),
        "colour_found": round(found / counts["needles"], 4) if counts["needles"] else None,
        "shape_right": rate("needle_shape_right", "needles"),
        "span_exact": rate("needle_span_exact", "needles"),
        "span_within_one_frame": rate("needle_span_within_one", "needles"),
        "spans_inside_window": rate("spans_inside", "spans_stated"),
    }


async def second_look_report(llm, data_dir: Path, *, n_videos: int) -> dict:
    protocol, counts = get_protocol(CONTEXT.protocol), {look: Counter() for look in LOOKS}
    banded = {look: {name: Counter() for _, name in STEP_BANDS} for look in LOOKS}
    for video in test_videos(data_dir, n_videos):
        for look, window, frames in look_frames(video):
            request = protocol.subagent_request(
                window, frames, ctx=CONTEXT, question=None, board=[]
            )
            await prepare_request(request)
            note = (await llm.complete(request)).text.strip()
            decoded = frame_store.encode_frames(
                video.path, tuple(frames["timestamps"]), frames["max_pixels"]
            )
            times = [f.timestamp for f in decoded]
            expected = window_note(video, times, window.end)
            band = step_band(window.start, window.end, len(times))
            for tally in (counts[look], banded[look][band]):
                note_counts(tally, expected, note, times, window.end)
                count_spans_inside(tally, note, window.start, window.end)
    return {
        look: {
            **rates(counts[look]),
            "by_frame_step": {name: rates(tally) for name, tally in banded[look].items()},
        }
        for look in LOOKS
    }


async def main_async(args) -> dict:
    with local_server(args.model, log_path=args.data / "second-look-server.log") as url:
        async with OpenAIChatModel(url, timeout=600.0) as llm:
            report = await second_look_report(llm, args.data.resolve(), n_videos=args.videos)
    return {"model": str(args.model), "videos": args.videos, **report}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "assets" / "paravt-nano")
    parser.add_argument(
        "--videos", type=int, default=20, help="Test-split videos (4 windows each)."
    )
    parser.add_argument("--data", type=Path, default=ROOT / ".paravt" / "data")
    parser.add_argument("--json", type=Path, default=Path(__file__).with_suffix(".json"))
    args = parser.parse_args()
    report = asyncio.run(main_async(args))
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
