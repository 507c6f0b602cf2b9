"""The whole machine: every node and edge of the ParaVT graph, wired in one place.

    START -> prepare -> main_agent --(final)--> [length_gate] --> finish -> END
               |          |  ^   ^------(too short, once)-----'    ^
               |  Send per call  |                                 |
               v          v      |       prepare --(nothing to run)'
             sub_agent ----------+-> collect
                   '--Send--> [verify_gate] --'

prepare sends the scanner first in two-agent mode. The gates in brackets are always wired
(Studio draws them) and run only when switched on: `verified` board mode sends each text
finding through the verify gate, otherwise a sub-agent posts its own note; a final answer
reaches the length gate only with `length_gate` on. Every node is guarded
(graphs.runs.lifecycle): however a run ends, in whatever process, the board says how.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from agents.client.completion import ChatModel
from graphs.admission import MediaRoots
from graphs.context import Context
from graphs.nodes.collect import collect
from graphs.nodes.finish import make_finish
from graphs.nodes.length_gate import length_gate
from graphs.nodes.main_agent import make_main_agent
from graphs.nodes.prepare import make_prepare
from graphs.nodes.sub_agent import make_sub_agent
from graphs.nodes.verify_gate import make_verify_gate
from graphs.presets import preset_schema
from graphs.routing import route_after_length, route_after_main, route_after_prepare
from graphs.runs.lifecycle import guarded
from graphs.state import InputState, OutputState, State
from graphs.store.board import BoardStore


def build_graph(
    llm: ChatModel | None,
    board: BoardStore,
    *,
    media_roots: Sequence[Path] | None = None,
    preset: Context | None = None,
) -> StateGraph:
    """The uncompiled graph; compile it with the checkpointer the caller needs. ``llm`` is the
    model its runs call, unless a run names its own (``graphs.context.RunContext``; None: every
    run must). With ``media_roots`` (a server's graph) every input may name media only under
    them; without, the caller's own fields may name any path and a chat names media under the
    working folder (`graphs.admission`). A run that sends no settings gets ``preset``
    (default: Context's own defaults)."""
    media = MediaRoots.of(media_roots)
    preset = preset or Context()
    graph = StateGraph(
        State,
        context_schema=preset_schema(preset),
        input_schema=InputState,
        output_schema=OutputState,
    )

    def node(name: str, fn, **kwargs) -> None:
        graph.add_node(name, guarded(fn, board, preset), **kwargs)

    node("prepare", make_prepare(board, media, llm))
    node("main_agent", make_main_agent(llm))
    node("sub_agent", make_sub_agent(llm, board), destinations=("verify_gate", "collect"))
    node("verify_gate", make_verify_gate(llm, board))
    node("collect", collect)
    node("length_gate", length_gate)
    node("finish", make_finish(board))

    graph.add_edge(START, "prepare")
    graph.add_conditional_edges(
        "prepare", route_after_prepare, ["sub_agent", "main_agent", "finish"]
    )
    graph.add_conditional_edges(
        "main_agent", route_after_main(preset), ["sub_agent", "collect", "length_gate", "finish"]
    )
    graph.add_edge("verify_gate", "collect")
    graph.add_edge("collect", "main_agent")
    graph.add_conditional_edges("length_gate", route_after_length, ["main_agent", "finish"])
    graph.add_edge("finish", END)
    return graph


def compile_graph(
    llm: ChatModel | None,
    board: BoardStore,
    *,
    checkpointer: Checkpointer = None,
    media_roots: Sequence[Path] | None = None,
    preset: Context | None = None,
    name: str = "paravt",
) -> CompiledStateGraph:
    """Compile without a checkpointer (Studio), with the CLI's SQLite file checkpointer
    (``graphs.store.checkpointer``) or with InMemorySaver. ``name`` is what a LangGraph server
    calls the graph's assistant."""
    graph = build_graph(llm, board, media_roots=media_roots, preset=preset)
    return graph.compile(checkpointer=checkpointer, name=name)
