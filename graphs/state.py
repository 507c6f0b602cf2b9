"""Graph state: raw data (frame references, the model's own turns, each call's record) and the
conversation as LangChain messages, never rendered prompt text.

``messages`` is the chat a user sees (Agent Chat UI, Studio): the human questions, the main
agent's tool calls as ``AIMessage.tool_calls``, each result as a ``ToolMessage`` with its call
id, and each answer as an ``AIMessage`` in plain words. The model's requests are rendered
from the raw records at call time (``graphs.transcript``, ``agents.main_turn``).

A thread holds one conversation about one video; each question on it is a run (``run_id``):
records carry their run's id, so a follow-up reads only its own turns.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from agents.prompts import QuestionKind

RunStatus = Literal["running", "answered", "no_answer", "failed", "interrupted"]


class CallRecord(TypedDict):
    """One crop_video call as the main agent wrote it, after validation."""

    run_id: str
    turn: int
    index: int
    arguments: dict[str, Any]
    start: float | None  # the validated window; None when the call was refused
    end: float | None
    error: str | None  # the message sent back to the model instead of a result


class ToolResult(TypedDict):
    """What a sub-agent returned for one call."""

    run_id: str
    turn: int
    index: int
    start: float
    end: float
    timestamps: list[float]
    content: str  # the summary (summary protocol) or a caption of the frames
    frames: dict[str, Any] | None  # a frame reference (frames protocol)
    verdict: str | None  # the verify gate's verdict; None when the gate is off
    region: list[float] | None  # the band of a still image the window showed


class ModelCall(TypedDict):
    """One request to the model, as the trace records it."""

    run_id: str
    agent: str  # "main", "sub:<turn>:<index>", "verify:<turn>:<index>"
    role: str  # agents.requests.Role
    turn: int
    messages: list[dict[str, Any]]  # OpenAI messages with frame references, not images
    prefill: str | None
    completion: dict[str, Any]  # agents.client.completion.Completion.to_record()
    frames_encoded: int


class Violations(TypedDict):
    """The parser's format violations of one main-agent turn."""

    run_id: str
    found: list[str]


class InputState(TypedDict, total=False):
    """What a caller provides: a chat (``messages``; the video named in the first human
    message, or in ``video``), or the older ``video`` + ``question`` fields."""

    messages: Annotated[list[AnyMessage], add_messages]
    video: str
    question: str
    options: list[str]
    kind: QuestionKind
    prompt: str  # a benchmark's own question block, used instead of the default
    system: str  # a dataset's own system prompt (the ParaVT release's RL rows)
    run_id: str
    source: dict[str, Any]  # where the question came from (a harness's task and doc id)


class OutputState(TypedDict):
    """What a caller gets back: the conversation, the last question's outcome, and the
    thread's records (each call, each note, each model call), so that ``updates`` streams
    show every node's work as it lands."""

    messages: Annotated[list[AnyMessage], add_messages]
    calls: Annotated[list[CallRecord], operator.add]
    tool_results: Annotated[list[ToolResult], operator.add]
    model_calls: Annotated[list[ModelCall], operator.add]
    run_id: str
    answer: str | None
    final_text: str | None  # the final turn as the model wrote it, prefill included
    final_reply: str | None  # the final turn's text as the chat API returned it
    status: RunStatus


class State(InputState, OutputState):
    """The whole state of a thread."""

    video: str
    question: str
    options: list[str]
    kind: NotRequired[QuestionKind]
    duration: float
    media: str  # agents.media.video.VideoInfo.codec ("image" and "pages" are still media)
    overview: dict[str, Any]  # frame reference of the overview frames
    asked: int  # human messages answered or being answered on this thread
    turn: int  # tool rounds completed so far in this run (-1 while a scanner looks first)
    violations: Annotated[list[Violations], operator.add]  # per main-agent turn
    rejected_turn: int | None  # the length gate sent back this main turn's answer
    refusal: str | None  # why the question could not be run (no video, a path refused)


class SubAgentTask(TypedDict):
    """The `Send` payload of one sub-agent."""

    run_id: str
    video: str
    media: str
    question: str
    turn: int
    index: int
    start: float
    end: float
    board: list[ToolResult]  # earlier turns' results; the sub-agent reads them per board mode


class VerifyTask(TypedDict):
    """The `Send` payload from a sub-agent to the verify gate: its finding, not yet a note."""

    run_id: str
    video: str
    media: str
    question: str
    result: ToolResult
    usage: dict[str, Any]  # the sub-agent call's tokens and latency, for the note
    board: NotRequired[list[ToolResult]]  # what the sub-agent read, for a look again
