"""Does a run's settings fit the served model's context window? Checked before anything is
decoded or sent, so a run that cannot fit fails at once with the settings to change, not
with garbage or an HTTP 400 from the server after the video has been read.

The estimate is a floor: the main agent's first turn (its overview frames, the prompt text
and ``max_new_tokens``) and one sub-agent window (its frames and ``summary_max_tokens``).
Later turns only grow, so a run refused here could never have finished.
"""

from __future__ import annotations

import math
from typing import Any

from agents.media.sampling import fit_pixels
from agents.media.video import VideoInfo
from graphs.context import Context

#: Qwen3-VL's vision tower: 16-pixel patches merged 2x2, one token per 32x32 pixels.
TOKEN_PIXELS = 32
#: Each frame's "<12.5 seconds>" label and its vision start and end tokens.
FRAME_TEXT_TOKENS = 8
#: The text of a first main-agent turn (system prompt, tool schema, a short question) and of
#: a sub-agent request: floors (paravt-nano's tokenizer counts 307 and 79 for the demo
#: question, its base's 309 and 81: a whole second after a space is one token in the shipped
#: one; tests/graphs/test_budget.py checks them against the server), so no run that would fit
#: is refused.
MAIN_TEXT_TOKENS = 300
SUB_TEXT_TOKENS = 75


def frame_tokens(info: VideoInfo, max_pixels: int) -> int:
    """Tokens of one frame of ``info`` sent at ``max_pixels``, its label included."""
    width, height = fit_pixels(info.width, info.height, max_pixels)
    rows = max(1, round(height / TOKEN_PIXELS))
    cols = max(1, round(width / TOKEN_PIXELS))
    return rows * cols + FRAME_TEXT_TOKENS


def main_prompt_tokens(ctx: Context, info: VideoInfo, overview: int) -> int:
    """A floor of the main agent's first prompt: its overview frames and its text."""
    return overview * frame_tokens(info, ctx.overview_max_pixels) + MAIN_TEXT_TOKENS


def window_prompt_tokens(ctx: Context, info: VideoInfo, window: int) -> int:
    """A floor of one sub-agent's prompt: its window's frames and its text."""
    return window * frame_tokens(info, ctx.crop_max_pixels) + SUB_TEXT_TOKENS


def budget_problem(ctx: Context, info: VideoInfo, overview: int, window: int, limit: int) -> str:
    """Why these settings cannot fit a ``limit``-token context ('' when they can).

    ``overview``: the run's overview frames; ``window``: the most frames of one crop.
    """
    per_overview = frame_tokens(info, ctx.overview_max_pixels)
    main = main_prompt_tokens(ctx, info, overview) + ctx.max_new_tokens
    if main > limit:
        return (
            f"these settings need about {main:,} tokens for the main agent's first turn "
            f"({overview} overview frames x {per_overview} tokens at overview_max_pixels="
            f"{ctx.overview_max_pixels}, plus max_new_tokens={ctx.max_new_tokens}), but the "
            f"served model's context is {limit:,} tokens. Lower overview_frames, "
            "overview_max_pixels or max_new_tokens (or pick the assistant preset made for "
            "this model)."
        )
    per_crop = frame_tokens(info, ctx.crop_max_pixels)
    sub = window_prompt_tokens(ctx, info, window) + ctx.summary_max_tokens
    if ctx.dispatch != "none" and sub > limit:
        return (
            f"these settings need about {sub:,} tokens for one sub-agent window ({window} "
            f"frames x {per_crop} tokens at crop_max_pixels={ctx.crop_max_pixels}, plus "
            f"summary_max_tokens={ctx.summary_max_tokens}), but the served model's context is "
            f"{limit:,} tokens. Lower crop_max_frames, crop_max_pixels or summary_max_tokens."
        )
    return ""


async def served_context_length(llm: Any) -> int | None:
    """The model's context window, if its client can tell (``OpenAIChatModel`` reads the
    server's model list); None for clients that cannot, which skips the check."""
    method = getattr(llm, "context_length", None)
    return await method() if method is not None else None


def window_frames_cap(ctx: Context, codec: str, duration: float) -> int:
    """The most frames one crop window can hold for this media."""
    if codec == "image":
        return 1
    if codec == "pages":
        return min(ctx.crop_max_frames, max(1, math.ceil(duration)))
    return ctx.crop_max_frames
