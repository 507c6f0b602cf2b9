"""One compiled graph shared by many concurrent runs, each calling its own model.

Rollout engines (the GRPO engine, AReaL's workflow) compile the graph once per board and
bind each run's model around it (``with bound(model): await run_question(...)``): graph
tasks inherit the binding through ``contextvars``, so concurrent runs never share a model.
"""

from __future__ import annotations

import contextvars
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from langgraph.graph.state import CompiledStateGraph

from agents.completion import ChatModel, Completion, TextSink
from agents.requests import ModelRequest
from graphs.board_base import BoardStore
from graphs.builder import compile_graph

_MODEL: contextvars.ContextVar[ChatModel] = contextvars.ContextVar("paravt_bound_model")


class BoundModel:
    """The ``ChatModel`` of a shared graph: each call goes to the model its run bound."""

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> Completion:
        try:
            model = _MODEL.get()
        except LookupError:
            raise RuntimeError(
                "this graph is shared: run it inside `with bound(model):` (graphs.bound)"
            ) from None
        return await model.complete(request, on_text=on_text)


@contextmanager
def bound(model: ChatModel) -> Iterator[None]:
    """Route the shared graph's calls made in this context (and its tasks) to ``model``."""
    token = _MODEL.set(model)
    try:
        yield
    finally:
        _MODEL.reset(token)


_GRAPHS: weakref.WeakKeyDictionary[BoardStore, CompiledStateGraph] = weakref.WeakKeyDictionary()


def shared_graph(board: BoardStore) -> CompiledStateGraph:
    """The graph of ``board`` for bound runs, compiled on first use (no checkpointer)."""
    if board not in _GRAPHS:
        _GRAPHS[board] = compile_graph(BoundModel(), board)
    return _GRAPHS[board]
