"""The sample an eval is running, for what wraps its model.

``evals.runner`` sets it in each sample's task, so every model call of that sample's graph
run (its sub-agents and gates run in tasks the run starts, which copy the context) sees it.
``evals.note_noise`` keys its draws on it: a sample's misreads do not depend on which other
samples ran first.
"""

from __future__ import annotations

from contextvars import ContextVar

CURRENT_SAMPLE: ContextVar[str | None] = ContextVar("paravt_eval_sample", default=None)
