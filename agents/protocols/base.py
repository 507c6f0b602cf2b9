"""What a protocol is: how every request of an episode is built, named and pinned to its source.

A protocol decides the system prompt and tool schema, the question block, the overview
(which frames, what size, how encoded, how labelled), how each call's result comes back, the
per-turn call cap and what happens over it, the forced answer (its words and token budget),
the think prefix and the sampling. Graph nodes, evaluation, SFT export and rollouts ask the
run's protocol (`agents.protocols.get_protocol(context.protocol)`) instead of knowing one.

A protocol reads the run's settings through the `Settings` shape (graphs.context.Context has
it; agents imports nothing of graphs) and may pin some of them (`pins`): the release's
evaluation driver, for one, always crops at 1 fps.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar
from typing import Protocol as TypingProtocol

from agents.main_turn import Setting, Step
from agents.media.video_probe import VideoInfo
from agents.protocol import ParsedTurn
from agents.question import Question
from agents.requests import ModelRequest
from agents.sub_turn import Window


class Settings(TypingProtocol):
    """The run settings a protocol reads (the fields of graphs.context.Context)."""

    protocol: str
    prompt_mode: str
    video_channel: str
    dispatch: str
    max_parallel: int
    max_turns: int
    overview_frames: int
    overview_sampling: str
    overview_max_pixels: int
    crop_fps: float
    crop_max_frames: int
    crop_max_pixels: int
    tool_result: str
    summary_max_tokens: int
    subagent_temperature: float
    max_new_tokens: int
    temperature: float
    top_p: float
    seed: int | None
    think_prefix: bool

    @property
    def calls_per_turn(self) -> int: ...


class EpisodeError(ValueError):
    """The protocol's source fails this episode outright (the release's driver errors the
    sample); the message says why. The run ends failed, never with an answer."""


@dataclass(frozen=True)
class PlannedCall:
    """One call of a turn as the protocol will serve it: the window it looks at, or the
    message the model gets instead (``error``)."""

    arguments: dict[str, Any] = field(hash=False)
    start: float | None
    end: float | None
    error: str | None = None


@dataclass(frozen=True)
class Turn:
    """What a main-agent turn means under the protocol: the calls it runs, and its answer."""

    calls: tuple[Any, ...]  # whatever the protocol's reader returns, in its order
    final: bool  # the run ends with this turn
    answer: str | None  # what the chat shows as the answer (None: no answer given)


class Protocol(ABC):
    """How one family of models is spoken to. Subclasses are stateless singletons."""

    name: ClassVar[str]
    source: ClassVar[str]  # repository@commit and files, or "this project"
    summary: ClassVar[str]
    streams: ClassVar[bool] = True  # stream the main agent's turns (to prefetch windows)

    def pins(self, ctx: Settings) -> dict[str, Any]:
        """Context fields this protocol fixes, with their values (none by default)."""
        return {}

    def refusal(self, ctx: Settings, *, media: str, task: str | None = None) -> str | None:
        """Why this protocol cannot serve a run of these settings on this media, or None."""
        return None

    @abstractmethod
    def overview(self, info: VideoInfo, ctx: Settings) -> dict[str, Any]:
        """The overview as a content part: a frame reference (agents.prompts.frames_part),
        or a video reference for servers that decode video themselves."""

    @abstractmethod
    def window_frames(self, window: Window, info: VideoInfo, ctx: Settings) -> dict[str, Any]:
        """The frame reference of one call's window."""

    @abstractmethod
    def read_turn(
        self, text: str, parsed: ParsedTurn, *, forced: bool, stopped: bool = True
    ) -> Turn:
        """What the main agent's turn (prefill included) asks for; `stopped` says the model
        ended it itself (not cut off at its token cap)."""

    @abstractmethod
    def plan_calls(
        self, calls: Sequence[Any], *, info: VideoInfo, ctx: Settings
    ) -> list[PlannedCall]:
        """The turn's calls as they will be served (capped, checked); EpisodeError where the
        protocol's source fails the whole episode."""

    @abstractmethod
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
        """The request for the main agent's next turn."""

    @abstractmethod
    def subagent_request(
        self,
        window: Window,
        frames: Mapping[str, Any],
        *,
        ctx: Settings,
        question: str | None,
        board: Sequence[str],
    ) -> ModelRequest | None:
        """The sub-agent's request for one window; None when the call returns its frames."""

    def note_of(self, text: str, finish_reason: str | None) -> str:
        """The note a sub-agent's completion becomes."""
        return text.strip()

    def forced(self, turn: int, ctx: Settings) -> bool:
        """Whether the main agent must answer on `turn` (no more tool turns)."""
        return turn >= ctx.max_turns or ctx.calls_per_turn == 0

    def ends_after_calls(self, turn: int, ctx: Settings) -> bool:
        """True when the calls of `turn` are the episode's last act: they run, and no main
        turn follows (the release's RL loop); False for protocols that answer afterwards."""
        return False
