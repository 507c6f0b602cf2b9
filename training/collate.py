"""Collate conversational rows with frame lists into Qwen-VL training batches.

TRL's vision collator needs a ``ProcessorMixin``, and Qwen3-VL's processor cannot be built
without torchvision (its video processor needs it). This collator needs only the tokenizer
and the image processor, and builds the ids exactly as ``serving.engine.LocalVLM.build_prompt``
does at inference: render the chat template, tokenize without special tokens, then repeat
each ``<|image_pad|>`` once per visual token of its image.
``tests/training/test_sft_data.py`` proves the parity against the engine itself.

Labels keep the tokens inside the template's ``{% generation %}`` blocks (the assistant's
content and its ``<|im_end|>``) and mask everything else with -100, visual tokens included.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from PIL import Image

IGNORE_INDEX = -100


def to_pil(image: Any) -> Image.Image:
    """An RGB image from PIL, JPEG/PNG bytes, a ``{"bytes", "path"}`` dict or a file path.

    Decoded as ``serving.messages.decode_image`` decodes a data URL, so the pixels match.
    """
    if isinstance(image, Mapping):
        image = image.get("bytes") or image.get("path")
    if isinstance(image, bytes | bytearray):
        image = Image.open(io.BytesIO(image))
    elif isinstance(image, str | Path):
        image = Image.open(image)
    if not isinstance(image, Image.Image):
        raise TypeError(f"cannot read an image from {type(image).__name__}")
    image.load()
    return image.convert("RGB")


@dataclass
class Encoded:
    """One row, tokenized: ids with image placeholders expanded, its loss mask and images."""

    input_ids: list[int]
    loss_mask: list[int]
    pixel_values: torch.Tensor | None
    image_grid_thw: torch.Tensor | None


@dataclass
class FramesCollator:
    """Rows ``{"messages", "images" | "frames"}`` -> ``input_ids``, ``attention_mask``,
    ``labels``, ``mm_token_type_ids``, ``pixel_values`` and ``image_grid_thw``.

    ``assistant_only_loss=False`` trains on every non-visual token. ``max_length`` keeps the
    start of a long row; an image the cut would split is dropped whole, with its pixels.
    """

    tokenizer: Any
    image_processor: Any
    max_length: int | None = None
    assistant_only_loss: bool = True
    pad_to_multiple_of: int | None = None
    image_token: str = "<|image_pad|>"
    vision_start_token: str = "<|vision_start|>"
    image_token_id: int = field(init=False)
    vision_start_id: int = field(init=False)

    def __post_init__(self) -> None:
        self.image_token_id = self.tokenizer.convert_tokens_to_ids(self.image_token)
        self.vision_start_id = self.tokenizer.convert_tokens_to_ids(self.vision_start_token)
        if self.tokenizer.pad_token_id is None:
            raise ValueError("the tokenizer has no pad token; set one before collating")

    def encode(self, messages: Sequence[Mapping[str, Any]], images: Sequence[Any]) -> Encoded:
        """Tokenize one conversation as the inference server would, plus its loss mask."""
        rendered = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages],
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
            add_generation_prompt=False,
        )
        ids, mask = list(rendered["input_ids"]), list(rendered["assistant_masks"])
        if ids.count(self.image_token_id) != len(images):
            raise ValueError(
                f"a row has {ids.count(self.image_token_id)} image parts for {len(images)} images"
            )
        pixel_values = grid = None
        counts: list[int] = []
        if images:
            vision = self.image_processor(images=[to_pil(i) for i in images], return_tensors="pt")
            pixel_values, grid = vision["pixel_values"], vision["image_grid_thw"]
            merge = self.image_processor.merge_size**2
            counts = [int(thw.prod()) // merge for thw in grid]
        expanded_ids: list[int] = []
        expanded_mask: list[int] = []
        slots = iter(counts)
        for token, keep in zip(ids, mask, strict=True):
            repeat = next(slots) if token == self.image_token_id else 1
            expanded_ids += [token] * repeat
            expanded_mask += [0 if token == self.image_token_id else int(keep)] * repeat
        if not self.assistant_only_loss:
            expanded_mask = [int(t != self.image_token_id) for t in expanded_ids]
        encoded = Encoded(expanded_ids, expanded_mask, pixel_values, grid)
        return self._truncate(encoded) if self.max_length else encoded

    def _truncate(self, row: Encoded) -> Encoded:
        cut = self.max_length
        if len(row.input_ids) <= cut:
            return row
        kept_images, patches, position = 0, 0, 0
        grids = row.image_grid_thw if row.image_grid_thw is not None else []
        merge = self.image_processor.merge_size**2
        for thw in grids:
            start = row.input_ids.index(self.image_token_id, position)
            end = start + int(thw.prod()) // merge
            if end > cut:
                if start < cut:  # the cut would split this image: cut before its vision start
                    cut = start - int(row.input_ids[start - 1] == self.vision_start_id)
                break
            kept_images, patches, position = kept_images + 1, patches + int(thw.prod()), end
        pixels = row.pixel_values[:patches] if kept_images else None
        grid = row.image_grid_thw[:kept_images] if kept_images else None
        return Encoded(row.input_ids[:cut], row.loss_mask[:cut], pixels, grid)

    def encode_row(self, example: Mapping[str, Any]) -> Encoded:
        """:meth:`encode` of one row ``{"messages", "images" | "frames"}``."""
        return self.encode(example["messages"], example.get("images", example.get("frames")) or [])

    def __call__(self, examples: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        return self.pad([self.encode_row(e) for e in examples])

    def pad(self, rows: Sequence[Encoded]) -> dict[str, torch.Tensor]:
        """Encoded rows as one batch, padded on the right to the longest."""
        longest = max(len(r.input_ids) for r in rows)
        if self.pad_to_multiple_of:
            longest = -(-longest // self.pad_to_multiple_of) * self.pad_to_multiple_of
        pad = self.tokenizer.pad_token_id
        input_ids = torch.full((len(rows), longest), pad, dtype=torch.long)
        labels = torch.full((len(rows), longest), IGNORE_INDEX, dtype=torch.long)
        attention_mask = torch.zeros((len(rows), longest), dtype=torch.long)
        for i, row in enumerate(rows):
            ids = torch.tensor(row.input_ids, dtype=torch.long)
            input_ids[i, : len(ids)] = ids
            attention_mask[i, : len(ids)] = 1
            keep = torch.tensor(row.loss_mask, dtype=torch.bool)
            labels[i, : len(ids)] = torch.where(keep, ids, IGNORE_INDEX)
        batch = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "labels": labels,
            "mm_token_type_ids": (input_ids == self.image_token_id).long() * attention_mask,
        }
        pixels = [r.pixel_values for r in rows if r.pixel_values is not None]
        if pixels:
            batch["pixel_values"] = torch.cat(pixels)
            batch["image_grid_thw"] = torch.cat(
                [r.image_grid_thw for r in rows if r.pixel_values is not None]
            )
        return batch
