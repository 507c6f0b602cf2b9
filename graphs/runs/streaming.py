"""Stream the main agent's tokens through LangGraph's ``stream_mode="messages"``.

The client hands over text as the endpoint generates it (``ChatModel.complete(on_text=)``);
`TokenStream` passes it to the run's callbacks as chat-model tokens, under the id of the
message the node will return, so a chat client grows that message live and the node's
final message (the answer in plain words, or the tool calls) replaces it. Protocol tags and
tool-call bodies are held back: a user sees the reasoning and the answer as they are
written, never ``<think>`` or ``<tool_call>`` markup.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, LLMResult
from langchain_core.runnables.config import ensure_config, get_callback_manager_for_config
from langchain_core.tracers._streaming import _StreamingCallbackHandler

_HIDDEN = re.compile(r"<(tool_call|tool_response)>.*?(?:</\1>|\Z)", re.DOTALL)
_TAGS = re.compile(r"<think>|</?answer>")
_END_THINK = "</think>"
_PARTIAL_TAG = re.compile(r"<[^<>]{0,14}\Z")


def visible(text: str) -> str:
    """What a user sees of a partial turn: no tool blocks, no protocol tags (the end of the
    reasoning becomes a paragraph break), no tag cut in half at the end.

    >>> visible('<think>Look at 10-20 s.</think>\\n<tool_call>\\n{"name": "crop')
    'Look at 10-20 s.\\n\\n\\n'
    >>> visible("<think>It is red</think><answer>A</answer>"), visible("<think>red</th")
    ('It is red\\n\\nA', 'red')
    """
    text = _PARTIAL_TAG.sub("", text)
    return _TAGS.sub("", _HIDDEN.sub("", text)).replace(_END_THINK, "\n\n")


class TokenStream:
    """Tokens of one main-agent turn, as chat-model stream events of the current graph run."""

    def __init__(self, message_id: str) -> None:
        self.message_id = message_id
        self._text = ""
        self._shown = ""
        self._run: Any = None
        self.listening = False
        """Whether a handler wants tokens (``stream_mode="messages"``): LangChain's own test
        for streaming a chat model, a ``_StreamingCallbackHandler`` among the handlers."""

    async def __aenter__(self) -> TokenStream:
        config = ensure_config()
        if config.get("callbacks"):  # inside a graph run: does it have handlers to tell?
            manager = get_callback_manager_for_config(config)
            if not manager.handlers:  # `app.py run`'s updates stream: no one to tell
                return self
            self.listening = any(isinstance(h, _StreamingCallbackHandler) for h in manager.handlers)
            runs = manager.on_chat_model_start(
                {"name": "paravt-main-agent"}, [[]], run_id=uuid.uuid4()
            )
            self._run = runs[0] if runs else None
        return self

    def send(self, piece: str) -> None:
        """Take the next piece of generated text; tell the callbacks what became visible."""
        self._text += piece
        if self._run is None or not self.listening:  # nobody takes tokens: the end tells all
            return
        shown = visible(self._text)
        if not shown.startswith(self._shown) or shown == self._shown:
            return
        delta, self._shown = shown[len(self._shown) :], shown
        chunk = AIMessageChunk(content=delta, id=self.message_id)
        self._run.on_llm_new_token(delta, chunk=ChatGenerationChunk(message=chunk))

    async def __aexit__(self, kind, error, _traceback) -> None:
        if self._run is None:
            return
        if error is not None:
            self._run.on_llm_error(error)
            return
        shown = self._shown if self.listening else visible(self._text)
        message = AIMessage(content=shown, id=self.message_id)
        self._run.on_llm_end(LLMResult(generations=[[ChatGeneration(message=message)]]))
