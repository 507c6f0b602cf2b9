"""``release-eval``: requests as the ParaVT release's evaluation driver builds them
(EvolvingLMMs-Lab/ParaVT@cf55249, ``paravt/eval/driver.py`` ``eval_one`` and
``paravt/eval/utils.py``), the protocol of ParaVT-8B's numbers and of every Table 1 baseline.

- A system prompt per prompt mode (``agentic_general``, ``agentic_minimal``, ``direct``,
  ``reasoning``), the agentic ones with the release's ``crop_video`` schema (``video_path``
  included; a model-supplied path is still ignored).
- The first user turn: the overview frames with no time labels (qwen-vl-utils' ``nframes``
  rule: `agents.media.qwen_frames`; bicubic resize, JPEG quality 85), or a ``file://`` video_url for
  servers that decode video; then the question block, to which agentic modes add the video's
  file name. A video too short for the frame count gets no frames at all, as in the release.
- Each call comes back as a user message of its own: its frames (1 fps, 1-16 frames, at
  most 50,176 pixels), then ``N frames from S.Ss to E.Es.`` inside ``<tool_response>``; a
  window qwen-vl-utils cannot crop comes back as ``[Error cropping S.Ss-E.Es]``. Calls over the
  cap are dropped, not refused. Times are read as the release reads them (``mm:ss``,
  ``start``/``end`` keys, 10 s when the end is missing).
- After the tool turn of the last turn, a user message forces the answer, with 64 new tokens
  (128 for grounding). No Think Prefix, temperature 0, 2048 new tokens otherwise.
- ``direct`` and ``reasoning`` are one request, without tools.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import agents.protocols.release_texts as T
from agents import prompts
from agents.main_turn import Setting, Step
from agents.media import qwen_frames
from agents.media.video_probe import VideoInfo, frame_table
from agents.protocol import ParsedTurn
from agents.protocols.base import EpisodeError, PlannedCall, Protocol, Settings, Turn
from agents.protocols.release_calls import clock_seconds, eval_driver_calls
from agents.protocols.release_frames import crop_plan, qwen_part, video_of, video_url_part
from agents.question import Question
from agents.requests import ModelRequest, SamplingParams
from agents.sub_turn import Window

PROMPT_MODES = ("agentic_general", "agentic_minimal", "direct", "reasoning")
VIDEO_CHANNELS = ("image_url", "video_url")
SYSTEM_PROMPTS = {
    "direct": T.DIRECT_SYSTEM,
    "reasoning": T.REASONING_SYSTEM,
    "agentic_general": T.GENERAL_AGENTIC_TEMPLATE.format(tool_schema=T.TOOL_SCHEMA),
    "agentic_minimal": T.MINIMAL_AGENTIC_TEMPLATE.format(tool_schema=T.TOOL_SCHEMA),
}


def is_agentic(mode: str) -> bool:
    return mode.startswith("agentic_")


def lettered(options: Sequence[str]) -> str:
    """Options one per line, each after its letter, as ``load_samples`` writes them (options
    that already carry a letter get a second one: Video-MME's ``A. A. ...``)."""
    return "\n".join(f"{chr(65 + i)}. {option}" for i, option in enumerate(options))


def mcq_instruction(mode: str) -> str:
    return T.MCQ_INSTRUCTION_DIRECT if mode == "direct" else T.MCQ_INSTRUCTION


def mcq_question(question: str, options: Sequence[str], mode: str) -> str:
    """``Question: ...`` then the lettered options and the mode's instruction."""
    return f"Question: {question}\nOptions:\n{lettered(options)}\n{mcq_instruction(mode)}"


def charades_question(caption: str) -> str:
    return T.CHARADES_QUESTION.format(caption=caption)


def subtitled(question: str, subtitles: str) -> str:
    """The release's whole-file subtitle block before the question (none when empty)."""
    return T.SUBTITLE_PREFIX.format(subtitles=subtitles) + question if subtitles else question


class ReleaseEvalProtocol(Protocol):
    name = "release-eval"
    source = f"{T.SOURCE}: paravt/eval/driver.py (eval_one), paravt/eval/utils.py"
    summary = "the ParaVT release's evaluation driver: ParaVT-8B and its Table 1 baselines"
    streams = False

    def pins(self, ctx: Settings) -> dict[str, Any]:
        return {
            "dispatch": "parallel" if is_agentic(ctx.prompt_mode) else "none",
            "temperature": 0.0,
            "top_p": 1.0,
            "seed": None,
            "think_prefix": False,
            "tool_result": "frames",
            "crop_fps": 1.0,
            "crop_max_frames": 16,
            "crop_max_pixels": 50_176,
            "overview_sampling": "exact",
            "question_aware_subagent": False,
            "board_mode": "isolated",
            "scanner_first": False,
            "length_gate": False,
            "earlier_notes": False,
        }

    def refusal(self, ctx: Settings, *, media: str, task: str | None = None) -> str | None:
        if ctx.prompt_mode not in PROMPT_MODES:
            known = ", ".join(PROMPT_MODES)
            return f"--prompt-mode {ctx.prompt_mode!r} is not one of release-eval's: {known}"
        if ctx.video_channel not in VIDEO_CHANNELS:
            return f"--video-channel must be one of {', '.join(VIDEO_CHANNELS)}"
        if media in ("image", "pages"):
            return (
                "--protocol release-eval reads videos only (the release's driver samples frames "
                f"with qwen-vl-utils); this input is {'an image' if media == 'image' else 'a deck'}"
                ": use --protocol paravt"
            )
        if is_agentic(ctx.prompt_mode) and ctx.max_turns < 1:
            return (
                f"--prompt-mode {ctx.prompt_mode} needs --max-turns 1 or more: with 0 the "
                "release's loop ends with no answer (use --prompt-mode direct for one turn)"
            )
        return None

    def overview(self, info: VideoInfo, ctx: Settings) -> dict[str, Any]:
        if ctx.video_channel == "video_url":
            return video_url_part(info.path)
        table = frame_table(info.path)
        try:
            plan = qwen_frames.fetch_plan(
                total_frames=table.count,
                fps=table.fps,
                width=info.width,
                height=info.height,
                nframes=ctx.overview_frames,
            )
        except qwen_frames.FrameRuleError:  # the release then sends the question alone
            return qwen_part(info.path, table, None)
        return qwen_part(info.path, table, plan)

    def window_frames(self, window: Window, info: VideoInfo, ctx: Settings) -> dict[str, Any]:
        table = frame_table(window.video)
        return qwen_part(window.video, table, crop_plan(table, info, window.start, window.end))

    def read_turn(
        self, text: str, parsed: ParsedTurn, *, forced: bool, stopped: bool = True
    ) -> Turn:
        calls = () if forced else tuple(eval_driver_calls(text))
        final = forced or not calls
        return Turn(calls=calls, final=final, answer=parsed.answer or text.strip() or None)

    def plan_calls(
        self, calls: Sequence[Any], *, info: VideoInfo, ctx: Settings
    ) -> list[PlannedCall]:
        if ctx.max_parallel > 0:
            calls = calls[: ctx.max_parallel]  # the surplus is dropped unseen, not refused
        table = frame_table(info.path)
        planned = []
        for call in calls:
            arguments = call.get("arguments", {}) if isinstance(call, dict) else None
            if not isinstance(arguments, dict):
                raise EpisodeError(
                    "the release's driver fails this sample: a tool call "
                    f"{'is not a JSON object' if arguments is None else 'has non-object arguments'}"
                )
            start = clock_seconds(arguments.get("start_time", arguments.get("start", 0)))
            end = clock_seconds(arguments.get("end_time", arguments.get("end", start + 10)))
            try:
                crop_plan(table, info, start, end)
                error = None
            except qwen_frames.FrameRuleError:
                error = f"[Error cropping {start:.1f}s-{end:.1f}s]"
            planned.append(PlannedCall(dict(arguments), start, end, error))
        return planned

    def question_text(self, ask: Question, video: str, ctx: Settings) -> str:
        if ask.prompt:
            text = ask.prompt
        elif ask.kind == "grounding":
            text = charades_question(ask.question)
        elif ask.options:
            bare = [o[3:] if o[1:3] == ". " and o[:1].isalpha() else o for o in ask.options]
            text = mcq_question(ask.question, bare, ctx.prompt_mode)
        else:
            text = f"Question: {ask.question}"
        if is_agentic(ctx.prompt_mode) and "video path" not in text.lower():
            text += T.VIDEO_PATH_SUFFIX.format(name=os.path.basename(video))
        return text

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
        question = self.question_text(ask, video_of(overview), ctx)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPTS[ctx.prompt_mode]},
            {"role": "user", "content": [dict(overview), prompts.text_part(question)]},
        ]
        forced = False
        for step in steps:
            if step.kind == "turn":
                messages.append({"role": "assistant", "content": step.text})
            elif step.kind == "replies":
                messages += [_reply_message(reply) for reply in step.replies]
                if step.last_turn:
                    grounding = ask.kind == "grounding"
                    messages.append(
                        {"role": "user", "content": T.FORCE_GROUNDING if grounding else T.FORCE_MCQ}
                    )
                    forced = True
        max_tokens = ctx.max_new_tokens
        if forced:
            grounding = ask.kind == "grounding"
            max_tokens = T.FORCE_MAX_TOKENS_GROUNDING if grounding else T.FORCE_MAX_TOKENS_MCQ
        return ModelRequest(
            role="main",
            messages=messages,
            params=SamplingParams(temperature=ctx.temperature, max_tokens=max_tokens),
            turn=turn,
        )

    def subagent_request(self, window, frames, *, ctx, question, board) -> ModelRequest | None:
        return None  # the evaluation driver returns each window's frames


def _reply_message(reply) -> dict[str, Any]:
    if reply.error is not None:
        return {"role": "user", "content": f"<tool_response>\n{reply.error}\n</tool_response>"}
    count = len(reply.frames["timestamps"])
    text = T.CROP_RESPONSE.format(count=count, start=reply.start, end=reply.end)
    return {"role": "user", "content": [dict(reply.frames), prompts.text_part(text)]}
