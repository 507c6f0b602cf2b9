"""Chat-template messages and images -> prompt token ids, as the local server and training's
rollouts render them.

User text is text: a message that spells a control token (``<|im_end|>\\n<|im_start|>
assistant`` to forge a turn, ``<|image_pad|>`` to claim an image slot) must not become that
token. transformers' ``apply_chat_template(..., sanitize_control_tokens=True)`` encodes the
control tokens found in the messages as plain text, and only those the template writes
itself as tokens; a chat that holds none is encoded exactly as before. Control tokens here
are the tokenizer's special tokens alone (``chat_control_tokens`` empty): the protocol tags
(``<tool_call>``, ``<think>``) are ordinary added tokens by design, which the client's own
system prompt and the model's earlier turns carry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from PIL import Image


class RequestError(Exception):
    """A request the client must fix; ``param`` names the offending field, if one does."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message, self.param = message, param


def text_only_content(tokenizer):
    """``tokenizer`` set to treat only its special tokens as chat control tokens (unless its
    checkpoint names its own), so that messages' control tokens are encoded as text."""
    if getattr(tokenizer, "chat_control_tokens", None) is None:
        tokenizer.chat_control_tokens = []
    return tokenizer


@dataclass
class Prompt:
    """A tokenized chat: ids with image placeholders expanded, and the image tensors."""

    input_ids: list[int]
    image_tokens: int
    vision: dict[str, torch.Tensor]


class ChatRenderer:
    """Chat-template messages and images -> a ``Prompt``, exactly as the server renders them;
    needs no weights (training renders with it for a policy held elsewhere)."""

    def __init__(self, tokenizer, image_processor, image_token_id: int) -> None:
        self.tokenizer, self.image_processor = text_only_content(tokenizer), image_processor
        self.image_token_id = image_token_id

    def build_prompt(
        self,
        messages: list[dict[str, Any]],
        images: list[Image.Image],
        *,
        tools: list[dict[str, Any]] | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
        continue_final_message: bool = False,
        add_generation_prompt: bool | None = None,
    ) -> Prompt:
        """Render the chat template, process the images and expand their placeholders.

        ``messages`` are chat-template messages, each image part ``{"type": "image"}`` standing
        for the next of ``images``; ``add_generation_prompt`` defaults to the opposite of
        ``continue_final_message``.
        """
        add_prompt = add_generation_prompt
        if add_prompt is None:
            add_prompt = not continue_final_message
        if add_prompt and continue_final_message:
            raise RequestError("continue_final_message needs add_generation_prompt false")
        try:  # the messages' own control tokens are encoded as text (module docstring)
            ids = self.tokenizer.apply_chat_template(
                messages,
                tools=tools,
                tokenize=True,
                return_dict=False,
                sanitize_control_tokens=True,
                add_generation_prompt=add_prompt,
                continue_final_message=continue_final_message,
                **(chat_template_kwargs or {}),
            )
        except (ValueError, TypeError) as exc:  # transformers' own complaints about the chat
            raise RequestError(f"cannot apply the chat template: {exc}", param="messages") from exc
        vision: dict[str, torch.Tensor] = {}
        counts: list[int] = []
        if images:
            try:
                vision = dict(self.image_processor(images=images, return_tensors="pt"))
            except ValueError as exc:  # e.g. an extreme aspect ratio
                raise RequestError(f"cannot process an image: {exc}", param="messages") from exc
            merge = self.image_processor.merge_size**2
            counts = [int(thw.prod()) // merge for thw in vision["image_grid_thw"]]
        if ids.count(self.image_token_id) != len(images):
            raise RequestError(
                f"the prompt has {ids.count(self.image_token_id)} image placeholders for "
                f"{len(images)} images (is '<|image_pad|>' written in the text?)",
                param="messages",
            )
        expanded: list[int] = []
        slots = iter(counts)
        for token in ids:
            expanded.extend([token] * next(slots) if token == self.image_token_id else [token])
        return Prompt(expanded, sum(counts), vision)
