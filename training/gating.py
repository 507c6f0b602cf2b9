"""nFrames Gating: one overview frame budget per prompt, drawn uniformly, shared by its group.

The draw is a pure function of (seed, epoch, prompt id) through BLAKE2b, so the G rollouts
of a group, every worker process and every rerun agree on it without coordination. The
public release seeded ``random.Random(hash(video_paths))`` instead: Python salts ``hash``
of strings per process (PYTHONHASHSEED), so its draws change from run to run, and keying on
the video makes every question about one video share a budget in every epoch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

FRAME_CHOICES = (4, 8, 16, 32, 64)


def draw_frames(
    prompt_id: str, *, choices: Sequence[int] = FRAME_CHOICES, seed: int = 0, epoch: int = 0
) -> int:
    """The overview frame count for ``prompt_id``: uniform over ``choices``, deterministic.

    ``epoch`` gives a prompt a fresh draw each pass over the data (keep it 0 for one fixed
    draw per prompt, as the paper describes).

    >>> draw_frames("videomme/001-2") == draw_frames("videomme/001-2")
    True
    >>> draw_frames("videomme/001-2") in FRAME_CHOICES
    True
    """
    if not choices:
        raise ValueError("choices is empty")
    key = json.dumps([seed, epoch, prompt_id]).encode()  # unambiguous, unlike "a:b:c"
    digest = hashlib.blake2b(key, digest_size=8).digest()
    return choices[int.from_bytes(digest, "big") % len(choices)]  # bias < 2**-60
