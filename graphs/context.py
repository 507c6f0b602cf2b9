"""Per-run knobs of the graph, shown as a form in LangGraph Studio."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from agents.protocols import PROMPT_MODES, PROTOCOLS, VIDEO_CHANNELS, get_protocol
from graphs.flags import add_dataclass_flags, given


def _knob(default, description: str):
    return field(default=default, metadata={"description": description})


# What each bounded setting must be: a Context refuses other values, and so does its --flag.
LIMITS: dict[str, tuple[Callable[[float], bool], str]] = {
    "max_parallel": (lambda v: v >= 1, "at least 1"),
    "max_turns": (lambda v: v >= 0, "at least 0"),
    "overview_frames": (lambda v: 1 <= v <= 2048, "from 1 to 2048"),
    "crop_max_frames": (lambda v: 1 <= v <= 64, "from 1 to 64"),
    "crop_fps": (lambda v: v > 0, "above 0"),
    "overview_max_pixels": (lambda v: v >= 64, "at least 64"),
    "crop_max_pixels": (lambda v: v >= 64, "at least 64"),
    "summary_max_tokens": (lambda v: v >= 1, "at least 1"),
    "max_new_tokens": (lambda v: v >= 1, "at least 1"),
    "temperature": (lambda v: v >= 0, "at least 0"),
    "subagent_temperature": (lambda v: v >= 0, "at least 0"),
    "top_p": (lambda v: 0 < v <= 1, "above 0 and at most 1"),
    "verify_rereads": (lambda v: 0 <= v <= 3, "from 0 to 3"),
}


@dataclass(frozen=True)
class Context:
    """Settings of one run; the graph is never rebuilt to change them."""

    protocol: str = field(
        default="paravt",
        metadata={
            "description": "How every request is built (agents.protocols): paravt (this "
            "project's, paravt-nano's), release-eval (the ParaVT release's evaluation driver: "
            "ParaVT-8B and its Table 1 baselines) or release-rl (its RL rollouts). A release "
            "protocol fixes the settings its source fixes.",
            "choices": tuple(PROTOCOLS),
        },
    )
    prompt_mode: Literal["agentic_general", "agentic_minimal", "direct", "reasoning"] = _knob(
        "agentic_general",
        "release-eval's prompt mode: agentic_general (ParaVT-8B, Qwen3-VL-8B with tools, "
        "Conan-7B), agentic_minimal (ParaVT-8B on Charades-STA), direct (Qwen2.5-VL-7B) or "
        "reasoning (the R1-style baselines).",
    )
    video_channel: Literal["image_url", "video_url"] = _knob(
        "image_url",
        "release-eval's overview channel: frames as images, or a file:// video_url for servers "
        "that decode video (vLLM, SGLang on the same machine).",
    )
    dispatch: Literal["parallel", "sequential", "none"] = _knob(
        "parallel",
        "How tool calls run: all of a turn's calls at once, one call per turn, or no tools.",
    )
    max_parallel: int = _knob(5, "Most crop_video calls served per turn; extras are refused.")
    max_turns: int = _knob(3, "Tool turns before the main agent is forced to answer.")
    overview_frames: int = _knob(64, "Frames sampled uniformly over the whole video.")
    overview_sampling: Literal["exact", "keyframe"] = _knob(
        "exact",
        "Overview frames at the exact uniform times, or at the keyframe nearest each time: "
        "much less decoding, each frame labelled and traced with its real time.",
    )
    overview_max_pixels: int = _knob(50_176, "Pixel budget of each overview frame.")
    crop_fps: float = _knob(1.0, "Frame rate at which a sub-agent samples its window.")
    crop_max_frames: int = _knob(16, "Most frames per window (ParaVT allows up to 64).")
    crop_max_pixels: int = _knob(50_176, "Pixel budget of each window frame (about 224x224).")
    tool_result: Literal["summary", "frames"] = _knob(
        "summary",
        "What a call returns: a sub-agent's text summary (RL protocol) or the frames (eval).",
    )
    question_aware_subagent: bool = _knob(
        False, "Show the question to sub-agents (the ParaVT release keeps them unaware)."
    )
    summary_max_tokens: int = _knob(512, "Token cap of a sub-agent summary.")
    subagent_temperature: float = _knob(
        0.0, "Sampling temperature of sub-agents (raise it to train them with RL)."
    )
    board_mode: Literal["isolated", "shared", "verified"] = _knob(
        "isolated",
        "Sub-agents see only their window (isolated), also earlier notes (shared), or only "
        "notes the verify gate judged SUPPORTED (verified).",
    )
    verify_rereads: int = _knob(
        1,
        "Verified board: how many times a window whose note the gate did not support is read "
        "again, from the frames between the first ones, before the note is withheld (0: "
        "withheld at once).",
    )
    board_max_chars: int = _knob(2000, "Most characters of earlier notes shown to a sub-agent.")
    scanner_first: bool = _knob(
        False,
        "Two-agent collaboration: a scanner sub-agent writes a note on the whole input first; "
        "the main agent (the checker) reads the board before its first turn.",
    )
    length_gate: bool = _knob(
        False, "Send a too-short open-ended answer back once with a coverage instruction."
    )
    min_answer_tokens: int = _knob(80, "Length gate: enough whitespace tokens.")
    min_answer_bullets: int = _knob(6, "Length gate: or enough bullet points.")
    max_new_tokens: int = _knob(2048, "Token cap of each main-agent turn.")
    temperature: float = _knob(0.0, "Sampling temperature of the main agent.")
    top_p: float = _knob(1.0, "Nucleus sampling of the main agent.")
    seed: int | None = _knob(None, "Sampling seed passed to the server, if any.")
    think_prefix: bool = _knob(
        True, "Prefill the main agent's turn with '<think>\\n' (needs continue_final_message)."
    )
    default_video: str | None = _knob(
        None,
        "The video (or deck folder, or image) a chat is about, when its messages do not name "
        "one; a path under the media roots.",
    )
    earlier_notes: bool = _knob(
        False, "Follow-up questions on a thread also read the notes of its earlier questions."
    )

    def __post_init__(self) -> None:
        get_protocol(self.protocol)  # an unknown name is a ValueError naming the known ones
        if self.prompt_mode not in PROMPT_MODES or self.video_channel not in VIDEO_CHANNELS:
            raise ValueError(
                f"Context has an unknown prompt_mode {self.prompt_mode!r} or video_channel "
                f"{self.video_channel!r}; use one of {PROMPT_MODES} and {VIDEO_CHANNELS}"
            )
        bad = [name for name, (ok, _) in LIMITS.items() if not ok(getattr(self, name))]
        if bad:
            values = ", ".join(f"{name}={getattr(self, name)!r}" for name in bad)
            raise ValueError(f"Context has out-of-range settings: {values}")

    @property
    def calls_per_turn(self) -> int:
        """The effective cap: sequential dispatch serves one call per turn, none serves zero."""
        return {"parallel": self.max_parallel, "sequential": 1, "none": 0}[self.dispatch]


@dataclass(frozen=True)
class RunContext(Context):
    """A run's settings and the model it calls. Rollout engines share one compiled graph and
    give each run its own policy this way, through LangGraph's ``runtime.context``; a graph
    compiled with its own model uses it when the run names none."""

    model: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, context: Context, model: Any) -> RunContext:
        return cls(**settings_of(context), model=model)


def settings_of(context: Context) -> dict[str, Any]:
    """The run's settings as plain data (a RunContext's model left out)."""
    return {f.name: getattr(context, f.name) for f in fields(Context)}


def model_of(context: Context | None, default: Any) -> Any:
    """The model a run calls: its own (RunContext), else the graph's."""
    model = getattr(context, "model", None) or default
    if model is None:
        raise RuntimeError(
            "this graph was compiled without a model: run it with a RunContext that names one"
        )
    return model


def effective(context: Context) -> Context:
    """The settings a run really has: `context` with its protocol's pinned fields applied
    (the release's evaluation driver always crops at 1 fps, whatever the form says)."""
    pins = get_protocol(context.protocol).pins(context)
    changed = {k: v for k, v in pins.items() if getattr(context, k) != v}
    return replace(context, **changed) if changed else context


def pinned_conflicts(context: Context, given_fields: set[str]) -> list[str]:
    """The fields the user set explicitly that the run's protocol overrides, as
    ``name=value (protocol fixes value)``."""
    pins = get_protocol(context.protocol).pins(context)
    return [
        f"--{name.replace('_', '-')} {getattr(context, name)!r} "
        f"({context.protocol} fixes {pins[name]!r})"
        for name in sorted(given_fields & set(pins))
        if getattr(context, name) != pins[name]
    ]


def add_context_arguments(parser: argparse.ArgumentParser) -> None:
    """One `--flag` per Context field, its description as the help text."""
    add_dataclass_flags(parser, Context, "run settings (graph Context)", limits=LIMITS)


def context_from_args(args: argparse.Namespace, base: Context | None = None) -> Context:
    """The Context with every flag the user gave applied over `base`."""
    return replace(base or Context(), **given(Context, args))
