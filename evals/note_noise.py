"""Note noise for the board study: a chat model that misreads a share of the sub-agents' notes.

``NoisyNotes`` wraps the study's model. Every completion of a request whose role is
``sub_agent`` that states a sighting (``agents.misreads.misreadable``) is, with probability
``rate``, replaced by the same note with one fact misread: its colour, its shape or its time
(``agents.misreads.misread``, the kind drawn uniformly). The graph is untouched: the wrong
note reaches the board, the verify gate and the main agent exactly as a sub-agent's own
misread would. Other roles pass through.

Draws are seeded by ``seed``, the sample being evaluated (``evals.current_sample``) and the
call (the video's file name, window, turn, call index, and how many times that sample made
that same call before), not by arrival order or the folder the data lives in, so a study
reruns the same noise wherever it runs, and every configuration misreads a sample's same
call alike; a window asked again (a later turn, a second look, another vote) draws again.
Before the sample was part of the key (:data:`VERSION` 1), the questions of one video drew
in the order they arrived, so two configurations could misread a call differently.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
from collections import Counter
from pathlib import PurePath
from typing import Any

from agents.client.completion import ChatModel, Completion, TextSink
from agents.misreads import KINDS, misread, misreadable
from agents.requests import ModelRequest
from evals.current_sample import CURRENT_SAMPLE

#: The study options that set the noise (recorded in the spec, never passed to a loader).
OPTIONS = ("note_noise", "note_noise_seed", "note_noise_version")
#: How draws are keyed (recorded in a noisy study's spec): 2 keys them on the sample too.
VERSION = 2
_LABEL = re.compile(r"^<(\d+(?:\.\d+)?) seconds>$")


def frame_times(request: ModelRequest) -> list[float]:
    """The times of the request's frames: its frame labels once prepared, else the times
    its frame references ask for."""
    if request.ready:
        texts = [
            p["text"].strip()
            for m in request.wire()
            if isinstance(m.get("content"), list)
            for p in m["content"]
            if p.get("type") == "text"
        ]
        found = [float(m[1]) for t in texts if (m := _LABEL.match(t))]
        if found:
            return found
    return [float(t) for ref in request.frames for t in ref["timestamps"]]


class NoisyNotes:
    """A ChatModel that misreads a share `rate` of the sighting notes its sub-agents write."""

    def __init__(self, llm: ChatModel, rate: float, *, seed: int = 0):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"note_noise must be in [0, 1], got {rate}")
        self.llm, self.rate, self.seed = llm, rate, seed
        self.calls: Counter[str] = Counter()
        self.misread: Counter[str] = Counter()  # notes changed, by kind

    def _rng(self, request: ModelRequest) -> random.Random:
        videos = sorted({PurePath(ref["video"]).name for ref in request.frames})
        key = (
            f"{self.seed}|{CURRENT_SAMPLE.get()}|{videos}|{request.window}|{request.turn}|"
            f"{request.call_index}"
        )
        self.calls[key] += 1
        digest = hashlib.sha256(f"{key}|{self.calls[key]}".encode()).hexdigest()
        return random.Random(int(digest[:16], 16))

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> Completion:
        completion = await self.llm.complete(request, on_text=on_text)
        if request.role != "sub_agent" or not misreadable(completion.text):
            return completion
        rng = self._rng(request)
        if rng.random() >= self.rate:
            return completion
        end = request.window[1] if request.window else None
        text, changed = misread(
            completion.text, rng.choice(KINDS), rng, times=frame_times(request), window_end=end
        )
        if changed is None:
            return completion
        self.misread[changed] += 1
        return dataclasses.replace(completion, text=text)

    def __getattr__(self, name: str) -> Any:  # model_name, context_length, warm_up, ...
        return getattr(self.llm, name)


def split_options(options: dict[str, Any]) -> tuple[dict[str, Any], float, int]:
    """(the loader's options, the noise rate, its seed) from a study's options.

    >>> split_options({"n_videos": 4, "note_noise": 0.3})
    ({'n_videos': 4}, 0.3, 0)
    """
    version = options.get("note_noise_version", VERSION)
    if int(version) != VERSION:
        raise ValueError(
            f"note_noise_version {version} is not this project's ({VERSION}: draws keyed on "
            "the sample too); drop the option to draw the current way"
        )
    loader = {k: v for k, v in options.items() if k not in OPTIONS}
    rate = float(options.get("note_noise") or 0.0)
    return loader, rate, int(options.get("note_noise_seed") or 0)
