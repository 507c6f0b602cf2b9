"""Version differences of transformers' ``TrainingArguments`` that TRL's configs inherit.

The project supports transformers 5.x (``pyproject.toml``); the device machine's image holds
5.17 and the CPU machines 5.24, so both spellings occur in practice.
"""

from __future__ import annotations

from dataclasses import fields


def checkpointing_field(config_class: type) -> str:
    """The name `config_class` (a ``TrainingArguments`` subclass) gives activation
    checkpointing: ``activation_checkpointing`` where it has that field (5.24 does; the old
    ``gradient_checkpointing`` still works there, with a FutureWarning), else
    ``gradient_checkpointing`` (5.17, where the new name is a TypeError). Which release
    between them renamed it was not checked, so this asks the class, not the version."""
    new = "activation_checkpointing"
    return new if new in {f.name for f in fields(config_class)} else "gradient_checkpointing"
