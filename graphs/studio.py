"""The graph LangGraph Studio (`langgraph dev`) loads: compiled without a checkpointer.

The dev server brings its own persistence; the model endpoint and the board file come from
the environment or `.env` (see graphs.settings).
"""

from __future__ import annotations

from graphs.board import Board
from graphs.builder import compile_graph
from graphs.settings import Settings

_settings = Settings.load()
graph = compile_graph(
    _settings.chat_model(),
    Board(_settings.board_path),
)
