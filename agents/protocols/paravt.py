"""``paravt``: this project's own protocol, the one paravt-nano is trained on.

Overview frames at the centres of equal segments, each after its absolute time
(``<12.5 seconds>``), resized to a pixel budget; the question block and system prompt of
`agents.prompts`; a turn's results in one user message, a ``<tool_response>`` per call; a
surplus or bad call refused with a message the model can act on; the Answer Suffix appended
to the last turn's results; the Think Prefix prefilled; sampling from the run's settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents import prompts
from agents.main_turn import Setting, Step, main_request
from agents.media.sampling import overview_times
from agents.media.video_probe import VideoInfo
from agents.protocol import THINK_PREFIX, ParsedTurn, ToolCall
from agents.protocols.base import PlannedCall, Protocol, Settings, Turn
from agents.question import Question
from agents.requests import ModelRequest, SamplingParams
from agents.sub_turn import Window, subagent_request, window_frames
from agents.tools import ToolArgumentError, validate_crop


class ParavtProtocol(Protocol):
    name = "paravt"
    source = "this project (agents/prompts.py, agents/main_turn.py, agents/sub_turn.py)"
    summary = "paravt-nano's own: labelled overview frames, Think Prefix, refusals the model reads"

    def overview(self, info: VideoInfo, ctx: Settings) -> dict[str, Any]:
        times = overview_times(info.codec, info.duration, ctx.overview_frames)
        return prompts.frames_part(
            info.path, times, ctx.overview_max_pixels, sampling=ctx.overview_sampling
        )

    def window_frames(self, window: Window, info: VideoInfo, ctx: Settings) -> dict[str, Any]:
        return window_frames(  # the prefetch builds the same reference: the same cache key
            window, fps=ctx.crop_fps, max_frames=ctx.crop_max_frames, max_pixels=ctx.crop_max_pixels
        )

    def read_turn(
        self, text: str, parsed: ParsedTurn, *, forced: bool, stopped: bool = True
    ) -> Turn:
        final = bool(parsed.answer) or forced or not parsed.tool_calls
        calls = () if final else parsed.tool_calls
        return Turn(calls=calls, final=final, answer=parsed.answer or None)

    def plan_calls(
        self, calls: Sequence[ToolCall], *, info: VideoInfo, ctx: Settings
    ) -> list[PlannedCall]:
        calls_per_turn, planned = ctx.calls_per_turn, []
        for position, call in enumerate(calls):
            start = end = error = None
            if position >= calls_per_turn:
                error = (
                    f"{call.name or 'tool'}: refused, at most {calls_per_turn} call(s) per turn; "
                    "this call was not run. Ask again next turn if you still need this window."
                )
            else:
                try:
                    window = validate_crop(call, info.duration)
                    start, end = window.start, window.end
                except ToolArgumentError as exc:
                    error = str(exc)
            planned.append(PlannedCall(dict(call.arguments), start, end, error))
        return planned

    def main_request(
        self,
        ask: Question,
        overview: Mapping[str, Any],
        *,
        duration: float | None,
        setting: Setting,
        steps: Sequence[Step],
        turn: int,
        ctx: Settings,
    ) -> ModelRequest:
        return main_request(
            ask,
            overview,
            duration=duration,
            setting=setting,
            steps=steps,
            turn=turn,
            prefill=THINK_PREFIX if ctx.think_prefix else None,
            params=SamplingParams(
                temperature=ctx.temperature,
                top_p=ctx.top_p,
                max_tokens=ctx.max_new_tokens,
                seed=ctx.seed,
            ),
        )

    def subagent_request(
        self,
        window: Window,
        frames: Mapping[str, Any],
        *,
        ctx: Settings,
        question: str | None,
        board: Sequence[str],
    ) -> ModelRequest | None:
        if ctx.tool_result == "frames":
            return None
        return subagent_request(
            window,
            frames,
            question=question,
            board=board,
            temperature=ctx.subagent_temperature,
            max_tokens=ctx.summary_max_tokens,
        )
