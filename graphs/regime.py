"""Fit a run's Context to the regime the served model was trained for, and warn outside it.

A checkpoint that records its training regime (``serving.regime``: ``regime.json``) has the
server show it as the ``regime`` field of its ``GET /v1/models`` entry. A run against such a
server takes the regime's values for every knob the caller did not set (paravt-nano runs 4
overview frames of 128x96 with 256-token turns, not Context's 64 frames of 224x224 and 2048
tokens), and a knob the caller did set far outside the regime gets a warning that says what
the model was trained for. Explicit values are kept: the warning is the whole intervention.
A server without a regime (SGLang, OpenAI) changes nothing.

The regime is read as the JSON the server sends (field names of ``serving.regime.Regime``),
so this module imports nothing of ``serving``; it comes through the run's own client, so the
request carries the endpoint's key like every other.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Collection, Mapping
from dataclasses import fields, replace
from typing import Any

from graphs.context import Context, context_from_args, effective, pinned_conflicts

log = logging.getLogger(__name__)


def regime_defaults(regime: Mapping[str, Any]) -> dict[str, Any]:
    """The Context values a regime stands for.

    >>> regime_defaults({"default_overview_frames": 4, "frame_width": 128, "frame_height": 96})
    {'overview_frames': 4, 'overview_max_pixels': 12288, 'crop_max_pixels': 12288}
    """
    values: dict[str, Any] = {}
    if "default_overview_frames" in regime:
        values["overview_frames"] = int(regime["default_overview_frames"])
    if "frame_width" in regime and "frame_height" in regime:
        pixels = int(regime["frame_width"]) * int(regime["frame_height"])
        values["overview_max_pixels"] = values["crop_max_pixels"] = pixels
    for name in (
        "crop_max_frames",
        "crop_fps",
        "max_parallel",
        "max_new_tokens",
        "summary_max_tokens",
        "think_prefix",
        "tool_result",
        "protocol",
    ):
        if name in regime:
            values[name] = regime[name]
    return values


def regime_warnings(context: Context, regime: Mapping[str, Any]) -> list[str]:
    """One sentence per knob of `context` outside what `regime` trained (empty when inside).

    >>> regime = {"overview_frames": [4, 8, 16], "frame_width": 128, "frame_height": 96,
    ...           "max_new_tokens": 256}
    >>> regime_warnings(Context(overview_frames=8, overview_max_pixels=12288,
    ...                         crop_max_pixels=12288, max_new_tokens=256), regime)
    []
    >>> len(regime_warnings(Context(overview_frames=64, max_new_tokens=2048), regime))
    4
    """
    out = []
    counts = sorted(int(n) for n in regime.get("overview_frames", ()))
    if counts and not counts[0] <= context.overview_frames <= counts[-1]:
        out.append(f"{context.overview_frames} overview frames (trained on {_listing(counts)})")
    if "frame_width" in regime and "frame_height" in regime:
        size = f"{regime['frame_width']}x{regime['frame_height']}"
        trained = int(regime["frame_width"]) * int(regime["frame_height"])
        for name in ("overview_max_pixels", "crop_max_pixels"):
            if getattr(context, name) > trained:
                out.append(f"{name}={getattr(context, name)} (trained on {size} frames)")
    for name in ("crop_max_frames", "max_new_tokens", "summary_max_tokens", "max_parallel"):
        if name in regime and getattr(context, name) > int(regime[name]):
            out.append(f"{name}={getattr(context, name)} (trained with at most {regime[name]})")
    for name in ("think_prefix", "tool_result", "protocol"):
        if name in regime and getattr(context, name) != regime[name]:
            out.append(f"{name}={getattr(context, name)!r} (trained with {regime[name]!r})")
    return out


def fit_context(
    context: Context, regime: Mapping[str, Any] | None, given: Collection[str] = ()
) -> tuple[Context, list[str]]:
    """`context` with the regime's values for every knob not in `given`, and the warnings for
    the knobs that stay outside the regime. No regime: `context` unchanged, no warnings. A
    protocol chosen against the regime's keeps its own settings: the regime's frame counts
    and sizes describe the other protocol's requests."""
    if not regime:
        return context, []
    trained = regime.get("protocol", "paravt")
    if "protocol" in given and context.protocol != trained:
        return context, [f"protocol={context.protocol!r} (trained with {trained!r})"]
    names = {f.name for f in fields(Context)}
    defaults = {k: v for k, v in regime_defaults(regime).items() if k in names and k not in given}
    fitted = replace(context, **defaults)
    return fitted, regime_warnings(fitted, regime)


async def served_regime(llm: Any) -> dict[str, Any] | None:
    """The ``regime`` in the served model's GET /models entry, asked through ``llm`` (an
    `agents.client.llm.OpenAIChatModel`: retried, with its key); None when the server records none
    or the client cannot list models. An endpoint that fails raises EndpointError."""
    entry_of = getattr(llm, "served_entry", None)
    if entry_of is None:
        return None
    regime = (await entry_of()).get("regime")
    return regime if isinstance(regime, dict) else None


def protocol_refusal(
    context: Context, given: Collection[str], regime: Mapping[str, Any] | None
) -> str | None:
    """Why the run's protocol cannot run as asked: a flag set against what the protocol
    fixes, or a video_url for a server that takes frames only. None when it can."""
    conflicts = pinned_conflicts(context, set(given))
    if conflicts:
        return (
            f"--protocol {context.protocol} fixes settings you set: {'; '.join(conflicts)}. "
            "Drop those flags, or use --protocol paravt to choose them yourself."
        )
    video_url = context.protocol == "release-eval" and context.video_channel == "video_url"
    if video_url and regime is not None and not regime.get("video_input", False):
        return (
            "--video-channel video_url sends the video file for the server to decode, and the "
            "served model's server takes frames only (this project's CPU server): use "
            "--video-channel image_url, or serve the model with vLLM or SGLang."
        )
    return None


async def served_context(args: argparse.Namespace, base: Context, llm: Any) -> Context:
    """The run's Context: the flags in `args` over `base`, every other knob from the served
    model's regime, then the fields its protocol fixes; logs one warning naming each knob left
    outside the regime. A protocol that cannot run as asked is a ValueError before anything
    is sent."""
    given = {f.name for f in fields(Context) if getattr(args, f.name, None) is not None}
    regime = await served_regime(llm)
    context, warnings = fit_context(context_from_args(args, base), regime, given)
    refused = protocol_refusal(context, given, regime)
    if refused:
        raise ValueError(refused)
    context = effective(context)
    if warnings:
        log.warning(
            "this run is outside the regime the served model was trained for: %s. Expect "
            "unreliable output (a small model writes garbage up to its token cap there); "
            "drop these flags to use the trained regime.",
            "; ".join(warnings),
        )
    return context


def _listing(counts: list[int]) -> str:
    return (
        ", ".join(map(str, counts[:-1])) + f" and {counts[-1]}"
        if len(counts) > 1
        else str(counts[0])
    )
