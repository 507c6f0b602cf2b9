"""PARA-GRPO on AReaL: the graph as a proxy-mode agent workflow, the release's engine-level
rollout workflow, and the launcher."""
