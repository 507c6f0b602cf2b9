"""One question through the compiled graph with a scripted model, as the graph tests ask it."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver

from agents.question import Question
from graphs.builder import compile_graph
from graphs.context import Context
from graphs.runs.run import run_question

QUESTION = "What colour is the shape?"
OPTIONS = ["A. red", "B. green", "C. blue", "D. yellow"]
SMALL = dict(overview_frames=4, overview_max_pixels=4096, crop_max_frames=4, crop_max_pixels=4096)


async def ask(model, board, video, context=None, question=None, **kw):
    """`question` (the multiple-choice colour question when None) through a new graph."""
    graph = compile_graph(model, board, checkpointer=kw.pop("checkpointer", InMemorySaver()))
    return await run_question(
        graph,
        board,
        video_path=video.path,
        question=question or Question(QUESTION, options=tuple(OPTIONS)),
        context=context or Context(**SMALL),
        **kw,
    )


def tool_responses(request) -> str:
    """The text of the last user message (the tool responses of the previous turn)."""
    content = request.messages[-1]["content"]
    return "".join(p.get("text", "") for p in content) if isinstance(content, list) else content
