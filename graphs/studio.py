"""The graphs a LangGraph server (`langgraph dev`, Studio, Agent Chat UI) loads: one per preset
of ``graphs.presets``, each its own assistant in ``langgraph.json``, compiled without a
checkpointer (the server brings its own persistence).

``paravt`` (the default) runs the shipped paravt-nano's trained regime; ``paravt-qwen3-vl-8b``
the paper's settings for Qwen3-VL-8B. The model endpoint, the board (a file, or PostgreSQL with
``PARAVT_DATABASE_URL``) and the media roots come from the environment or `.env` (see
graphs.settings). ``langgraph.postgres.json`` names `postgres_checkpointer` as the server's
checkpointer, so that its threads go to the same database as the board.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from graphs.builder import compile_graph
from graphs.presets import NANO, QWEN3_VL_8B
from graphs.settings import Settings
from graphs.store.postgres.url import DatabaseError
from graphs.store.stores import open_board, open_checkpoints

_settings = Settings.load()
_model, _board = _settings.chat_model(), open_board(_settings)

graph = compile_graph(_model, _board, media_roots=_settings.roots, preset=NANO, name="paravt")
qwen3_vl_8b = compile_graph(
    _model, _board, media_roots=_settings.roots, preset=QWEN3_VL_8B, name="paravt-qwen3-vl-8b"
)


@asynccontextmanager
async def postgres_checkpointer() -> AsyncIterator:
    """The server's checkpointer in the board's database (``langgraph.postgres.json``)."""
    settings = Settings.load()
    if not settings.database_url:
        raise DatabaseError("langgraph.postgres.json needs PARAVT_DATABASE_URL=postgresql://...")
    async with open_checkpoints(settings) as saver:
        yield saver
