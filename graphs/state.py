"""Graph state: raw data only (frame references, never images or formatted prompts)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

RunStatus = Literal["running", "answered", "no_answer", "failed", "interrupted"]


class CallRecord(TypedDict):
    """One crop_video call as the main agent wrote it, after validation."""

    turn: int
    index: int
    arguments: dict[str, Any]
    start: float | None  # the validated window; None when the call was refused
    end: float | None
    error: str | None  # the message sent back to the model instead of a result


class ToolResult(TypedDict):
    """What a sub-agent returned for one call."""

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

    agent: str  # "main" or "sub:<turn>:<index>"
    turn: int
    messages: list[dict[str, Any]]  # OpenAI messages with frame references, not images
    prefill: str | None
    completion: dict[str, Any]  # agents.llm.Completion.to_record()
    frames_encoded: int


class InputState(TypedDict):
    """What a caller provides."""

    video: str
    question: str
    options: NotRequired[list[str]]
    kind: NotRequired[Literal["multiple_choice", "grounding", "open_ended"]]
    prompt: NotRequired[str]  # a benchmark's own question block, used instead of the default
    run_id: NotRequired[str]


class OutputState(TypedDict):
    """What a caller gets back."""

    run_id: str
    answer: str | None
    final_text: str | None  # the final turn as the model wrote it, prefill included
    final_reply: str | None  # the final turn's text as the chat API returned it
    status: RunStatus


class State(InputState, OutputState):
    """The whole state of a run."""

    messages: Annotated[list[AnyMessage], add_messages]
    duration: float
    overview: dict[str, Any]  # frame reference of the overview frames
    turn: int  # tool rounds completed so far (-1 while a two-agent scanner looks first)
    calls: Annotated[list[CallRecord], operator.add]
    tool_results: Annotated[list[ToolResult], operator.add]
    model_calls: Annotated[list[ModelCall], operator.add]
    violations: Annotated[list[list[str]], operator.add]  # per main-agent turn
    length_retried: bool  # the length gate has sent the answer back once


class SubAgentTask(TypedDict):
    """The `Send` payload of one sub-agent."""

    run_id: str
    video: str
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
    question: str
    result: ToolResult
    usage: dict[str, Any]  # the sub-agent call's tokens and latency, for the note
