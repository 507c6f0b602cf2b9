"""Named run settings: the graph's defaults when a caller sends none (Studio, Agent Chat UI).

``langgraph.json`` serves one assistant per preset (``graphs.studio``); each compiles the
same graph with its preset as the context schema, so Studio's form shows the preset's values
and a run that sends no settings gets them. A setting a caller does send wins, as ever.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import replace

from agents import benchmark
from graphs.context import Context

#: paravt-nano's trained regime: the needle benchmark's frames (4 overview frames of 128x96,
#: 12 per window, 4 parallel calls) and its token caps (256-token turns, 48-token notes).
NANO = replace(Context(**benchmark.GRAPH_SETTINGS), max_new_tokens=256, summary_max_tokens=48)
#: The paper's settings for Qwen3-VL-8B (reference/paravt-recipe.md): 64 overview frames and
#: windows of up to 16 frames at 1 fps, each about 224x224; 5 parallel calls, 3 tool turns,
#: 2048-token turns, 512-token summaries, the Think Prefix. These are Context's own defaults.
QWEN3_VL_8B = Context()

PRESETS: dict[str, Context] = {"paravt-nano": NANO, "qwen3-vl-8b": QWEN3_VL_8B}


def preset_schema(preset: Context) -> type[Context]:
    """``Context`` itself for its own defaults, else a subclass whose defaults are ``preset``
    (what LangGraph builds when a run sends no context, and what Studio's form shows)."""
    if preset == Context():
        return Context
    hints = typing.get_type_hints(Context)
    fields = [
        (f.name, hints[f.name], dataclasses.field(default=value, metadata=f.metadata))
        for f in dataclasses.fields(Context)
        for value in [getattr(preset, f.name)]
    ]
    name = next((key for key, value in PRESETS.items() if value == preset), "custom")
    schema = dataclasses.make_dataclass(
        "Context_" + name.replace("-", "_"), fields, bases=(Context,), frozen=True
    )
    schema.__doc__ = f"Settings of one run, defaulting to the {name} preset."
    return schema
