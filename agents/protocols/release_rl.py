"""``release-rl``: requests as the ParaVT release's RL rollouts build them
(EvolvingLMMs-Lab/ParaVT@cf55249, ``paravt/rl/workflow.py`` ``HierarchicalAgentWorkflow`` and
its crop_video sub-agent, under ``paravt/rl/configs/_base.yaml``).

- The system prompt is the training row's own (a ParaVT parquet's ``prompt``), followed by the
  workflow's ``# Tools`` message unless the row's prompt already lists ``<tools>``; a row
  without a system prompt gets the tools message alone.
- The overview: qwen-vl-utils at 1 fps, at most 64 frames of 784-50,176 pixels (the recipe sets
  ``fps``, which makes the workflow drop its frame count, so nFrames gating never changes the
  frames), each image after ``<t seconds>`` with t = frame index / the decoder's average rate.
- Every turn may call tools; the calls of a turn all run (no cap); each finished summary comes
  back as its own user message inside ``<tool_response>``; a call the sub-agent refuses leaves
  no message (the workflow puts raw error text in its token stream instead, outside any chat
  turn). After max_turns + 1 turns the episode ends, with no forced answer.
- The sub-agent sees the window's frames (1 fps, 1-16, 784-50,176 pixels) and the workflow's
  own prompt, with no system prompt and no question; a window must start before the video
  ends and before it ends; its end is clamped to the video.
- The Think Prefix is prefilled on every turn when the recipe sets it (PARA-GRPO), and the
  model's earlier turns are sent without it, as the workflow's messages hold them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import agents.protocols.release_texts as T
from agents import prompts
from agents.main_turn import Setting, Step
from agents.media import qwen_frames
from agents.media.video_probe import VideoInfo, frame_table
from agents.protocol import THINK_PREFIX, ParsedTurn
from agents.protocols.base import PlannedCall, Protocol, Settings, Turn
from agents.protocols.release_calls import rl_workflow_calls
from agents.protocols.release_frames import crop_plan, qwen_part
from agents.question import Question
from agents.requests import ModelRequest, SamplingParams
from agents.sub_turn import Window

OVERVIEW = {"sample_fps": 1, "max_frames": 64, "min_pixels": 784, "max_pixels": 50176}
"""``hierarchical_agent`` of the release's ``_base.yaml``: fps 1, max_frames 64, 784-50,176."""
FAILED = "[Error: crop_video failed]"
TOOL_FUNCTION = {
    "type": "function",
    "function": {
        "name": "crop_video",
        "description": T.RL_CROP_DESCRIPTION,
        "parameters": {  # the sub-agent's parameter table, as the manager passes it on
            "video_path": {"type": "string", "description": "Path to the video file"},
            "start_time": {"type": "number", "description": "Start time in seconds"},
            "end_time": {"type": "number", "description": "End time in seconds"},
        },
    },
}


def tools_message() -> str:
    """The workflow's ``tools_system_message``."""
    return T.RL_TOOLS_HEADER + json.dumps(TOOL_FUNCTION) + T.RL_TOOLS_FOOTER


def system_text(row_system: str | None) -> str:
    """The rollout's system prompt: the row's, then the tools message (unless it has one)."""
    if row_system is None:
        return tools_message()
    if "<tools>" in row_system:
        return row_system
    return row_system + "\n\n" + tools_message()


def clock(seconds: float) -> str:
    """``mm:ss`` as the sub-agent's prompt writes window bounds."""
    return f"{int(seconds // 60):02d}:{int(seconds % 60):02d}"


class ReleaseRLProtocol(Protocol):
    name = "release-rl"
    source = (
        f"{T.SOURCE}: paravt/rl/workflow.py, paravt/rl/subagents/crop_video/cropped_video.py,"
        " paravt/rl/utils/tool_parser.py, paravt/rl/configs/_base.yaml"
    )
    summary = "the ParaVT release's RL rollouts: the parquet's prompts, summaries, no forced answer"
    streams = False

    def pins(self, ctx: Settings) -> dict[str, Any]:
        return {
            "dispatch": "parallel",
            "tool_result": "summary",
            "crop_fps": 1.0,
            "crop_max_frames": 16,
            "crop_max_pixels": 50_176,
            "summary_max_tokens": T.RL_SUMMARY_MAX_TOKENS,
            "subagent_temperature": ctx.temperature,
            "overview_sampling": "exact",
            "question_aware_subagent": False,
            "board_mode": "isolated",
            "scanner_first": False,
            "length_gate": False,
            "earlier_notes": False,
            "top_p": 1.0,
        }

    def refusal(self, ctx: Settings, *, media: str, task: str | None = None) -> str | None:
        if media in ("image", "pages"):
            return "--protocol release-rl reads videos only: use --protocol paravt"
        return None

    def overview(self, info: VideoInfo, ctx: Settings) -> dict[str, Any]:
        table = frame_table(info.path)
        plan = qwen_frames.fetch_plan(
            total_frames=table.count,
            fps=table.fps,
            width=info.width,
            height=info.height,
            **OVERVIEW,
        )
        indices = list(plan.indices)
        if len(indices) % 2:  # the workflow pads to Qwen3-VL's merge size (never needed: even)
            indices.append(indices[-1])
        times = [i / table.fps for i in indices]
        return qwen_part(info.path, table, plan, label_times=times, encoding="qwen-png")

    def window_frames(self, window: Window, info: VideoInfo, ctx: Settings) -> dict[str, Any]:
        table = frame_table(window.video)
        plan = crop_plan(table, info, window.start, window.end)
        return qwen_part(window.video, table, plan, encoding="qwen-png")

    def read_turn(
        self, text: str, parsed: ParsedTurn, *, forced: bool, stopped: bool = True
    ) -> Turn:
        # The workflow reads the decoded tokens, which end with <|im_end|> when the model
        # stopped by itself: a call left open at the end is then not JSON.
        seen = text + "<|im_end|>" if stopped else text
        calls = rl_workflow_calls(seen) or []
        return Turn(calls=tuple(calls), final=not calls, answer=parsed.answer or None)

    def plan_calls(
        self, calls: Sequence[tuple[str, str]], *, info: VideoInfo, ctx: Settings
    ) -> list[PlannedCall]:
        table = frame_table(info.path)
        planned = []
        for name, raw in calls:
            arguments = json.loads(raw)
            window = _window(name, arguments, info.duration)
            if window is not None:
                try:
                    crop_plan(table, info, *window)
                except qwen_frames.FrameRuleError:
                    window = None
            kept = dict(arguments) if isinstance(arguments, dict) else {"value": arguments}
            if window is None:
                planned.append(PlannedCall(kept, None, None, FAILED))
            else:
                planned.append(PlannedCall(kept, window[0], window[1]))
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
        question = ask.prompt if ask.prompt is not None else _question(ask)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": [prompts.text_part(system_text(ask.system))]},
            {"role": "user", "content": [dict(overview), prompts.text_part(question)]},
        ]
        for step in steps:
            if step.kind == "turn":
                text = step.text.removeprefix(THINK_PREFIX) if ctx.think_prefix else step.text
                messages.append({"role": "assistant", "content": [prompts.text_part(text)]})
            elif step.kind == "replies":
                # A failed call leaves raw text in the workflow's token stream, not a message
                # in the chat it holds: the chat is what a chat server can be sent.
                for reply in step.replies:
                    if reply.error is None:
                        content = T.RL_TOOL_RESPONSE.format(summary=reply.note or "")
                        messages.append({"role": "user", "content": [prompts.text_part(content)]})
        return ModelRequest(
            role="main",
            messages=messages,
            params=SamplingParams(
                temperature=ctx.temperature, max_tokens=ctx.max_new_tokens, seed=ctx.seed
            ),
            turn=turn,
            prefill=THINK_PREFIX if ctx.think_prefix else None,
        )

    def subagent_request(self, window, frames, *, ctx, question, board) -> ModelRequest:
        text = T.RL_SUBAGENT_PROMPT.format(
            start=clock(window.start), end=clock(window.end), duration=window.end - window.start
        )
        return ModelRequest(
            role="sub_agent",
            messages=[{"role": "user", "content": [dict(frames), prompts.text_part(text)]}],
            params=SamplingParams(
                temperature=ctx.subagent_temperature, max_tokens=ctx.summary_max_tokens
            ),
            turn=window.turn,
            call_index=window.index,
            window=(window.start, window.end),
        )

    def note_of(self, text: str, finish_reason: str | None) -> str:
        # The workflow cuts a summary at 512 tokens and marks it; the request asks for 512.
        return text + T.RL_TRUNCATED if finish_reason == "length" else text

    def forced(self, turn: int, ctx: Settings) -> bool:
        return False  # every turn may call tools; the loop just stops after max_turns + 1

    def ends_after_calls(self, turn: int, ctx: Settings) -> bool:
        return turn >= ctx.max_turns


def _window(name: str, arguments: Any, duration: float) -> tuple[float, float] | None:
    """The sub-agent's checks: a crop_video call with numeric start < end, start inside the
    video; the end clamped to the video's length. None when the workflow fails the call."""
    if name != "crop_video" or not isinstance(arguments, dict):
        return None
    start = arguments.get("start_time", arguments.get("start"))
    end = arguments.get("end_time", arguments.get("end"))
    numbers = all(isinstance(v, int | float) for v in (start, end))
    if not numbers or start >= end or start >= duration:
        return None
    return float(start), float(min(end, duration))


def _question(ask: Question) -> str:
    lines = [ask.question, *ask.options]
    return "\n".join(line.strip() for line in lines if line.strip())
