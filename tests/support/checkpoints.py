"""A copy of the shipped paravt-nano, its chat template as shipped or as a Thinking
checkpoint's (the generation prompt opens the think block itself)."""

from __future__ import annotations

import shutil

from serving.checkpoints import NANO_DIR

GENERATION = "{%- if add_generation_prompt -%}\n  "
INSTRUCT_PROMPT = GENERATION + "{{- '<|im_start|>assistant\n' -}}"  # a literal newline
THINKING_PROMPT = GENERATION + "{{- '<|im_start|>assistant\n<think>\n' -}}"


def checkpoint(folder, thinking: bool):
    shutil.copytree(NANO_DIR, folder)
    if thinking:
        template = folder / "chat_template.jinja"
        text = template.read_text()
        assert text.count(INSTRUCT_PROMPT) == 1, "the nano template changed: update this test"
        template.write_text(text.replace(INSTRUCT_PROMPT, THINKING_PROMPT))
    return folder
