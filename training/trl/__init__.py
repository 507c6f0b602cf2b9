"""PARA-GRPO through TRL on one node: the entry point, the rollout function, the trainer and
its generation backends."""
