"""paravt-graph as an lmms-eval model: `lmms-eval --model paravt` (docs/lmms-eval.md)."""
