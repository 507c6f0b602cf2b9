"""The graphs a LangGraph server (`langgraph dev`, Studio, Agent Chat UI) loads: one per preset
of ``graphs.presets``, each its own assistant in ``langgraph.json``, compiled without a
checkpointer (the server brings its own persistence).

``paravt`` (the default) runs the shipped paravt-nano's trained regime; ``paravt-qwen3-vl-8b``
the paper's settings for Qwen3-VL-8B. The model endpoint, the board file and the media roots
come from the environment or `.env` (see graphs.settings).
"""

from __future__ import annotations

from graphs.board import Board
from graphs.builder import compile_graph
from graphs.presets import NANO, QWEN3_VL_8B
from graphs.settings import Settings

_settings = Settings.load()
_model, _board = _settings.chat_model(), Board(_settings.board_path)

graph = compile_graph(_model, _board, media_roots=_settings.roots, preset=NANO, name="paravt")
qwen3_vl_8b = compile_graph(
    _model, _board, media_roots=_settings.roots, preset=QWEN3_VL_8B, name="paravt-qwen3-vl-8b"
)
