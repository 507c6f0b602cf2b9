"""The whole machine: every node and edge of the ParaVT graph, wired in one place.

    START -> prepare -> main_agent --(final)--> length_gate --> finish -> END
               |          |  ^   ^------(too short, once)-----'
               |  Send per call  |
               v          v      |
             sub_agent --Send--> verify_gate -> collect

prepare sends the scanner first in two-agent mode. The verify and length gates are always
wired and pass through when switched off.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from agents.completion import ChatModel
from graphs.board import Board
from graphs.context import Context
from graphs.nodes.collect import collect
from graphs.nodes.finish import make_finish
from graphs.nodes.length_gate import length_gate
from graphs.nodes.main_agent import make_main_agent
from graphs.nodes.prepare import make_prepare
from graphs.nodes.sub_agent import make_sub_agent
from graphs.nodes.verify_gate import make_verify_gate
from graphs.routing import route_after_length, route_after_main, route_after_prepare
from graphs.state import InputState, OutputState, State


def build_graph(llm: ChatModel, board: Board) -> StateGraph:
    """The uncompiled graph; compile it with the checkpointer the caller needs."""
    graph = StateGraph(
        State, context_schema=Context, input_schema=InputState, output_schema=OutputState
    )
    graph.add_node("prepare", make_prepare(board))
    graph.add_node("main_agent", make_main_agent(llm))
    graph.add_node("sub_agent", make_sub_agent(llm), destinations=("verify_gate",))
    graph.add_node("verify_gate", make_verify_gate(llm, board))
    graph.add_node("collect", collect)
    graph.add_node("length_gate", length_gate)
    graph.add_node("finish", make_finish(board))

    graph.add_edge(START, "prepare")
    graph.add_conditional_edges("prepare", route_after_prepare, ["sub_agent", "main_agent"])
    graph.add_conditional_edges(
        "main_agent", route_after_main, ["sub_agent", "collect", "length_gate"]
    )
    graph.add_edge("verify_gate", "collect")
    graph.add_edge("collect", "main_agent")
    graph.add_conditional_edges("length_gate", route_after_length, ["main_agent", "finish"])
    graph.add_edge("finish", END)
    return graph


def compile_graph(
    llm: ChatModel, board: Board, *, checkpointer: Checkpointer = None
) -> CompiledStateGraph:
    """Compile without a checkpointer (Studio), with AsyncSqliteSaver (CLI) or InMemorySaver."""
    return build_graph(llm, board).compile(checkpointer=checkpointer, name="paravt")
