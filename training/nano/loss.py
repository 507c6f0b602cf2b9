"""paravt-nano's SFT loss: content-weighted next-token loss, the shared-prefix pass, and the
auxiliary per-frame target of the vision tower.

- **Loss weighting.** The loss is the token mean over the batch with every *content* token
  (a colour, a shape, an option letter, a number, the "No" of "No coloured shapes", a
  one-token lookup key) weighted more than the others. Under a per-row mean the main
  agent's two or three decision tokens carried about 1/154 of a main-agent row (its first
  turn's tool-call JSON took the rest).
- **Auxiliary vision target.** Each frame's visual tokens are scored by a linear head (colour
  and shape, each with a "none" class; the logits pooled over the frame's tokens by
  log-sum-exp). The head exists only in training: the checkpoint is the plain Qwen3-VL.
- **Two exact speed-ups.** The patch embedding (a Conv3d whose stride equals its kernel) runs
  as the equivalent matrix product, whose backward is 10x faster on the CPU; rows that open
  with the same tokens have that prefix run once; logits are computed only where a label is.
"""

from __future__ import annotations

import math
import types
from collections.abc import Sequence

import torch

from agents import benchmark
from training.nano.intents import NUMBER_WORDS
from training.nano.model import LOOKUP_KEYS, VERDICTS

IGNORE = -100


def content_token_ids(tokenizer) -> set[int]:
    """Ids of the tokens that carry a decision: colours, shapes, option letters (and their
    openers, "\nA."), numbers (and number words), the "yes"/"no" of the option scan, the
    "No" of an empty window or overview (with or without a leading space), the lookup keys
    that name a colour or a shape ("Seen: red", " the cross is") and the verify gate's
    verdicts."""
    words = {*benchmark.COLOURS, *benchmark.SHAPES, *benchmark.LETTERS, "No", "no", "yes"}
    words |= {key.strip() for key in LOOKUP_KEYS} | set(VERDICTS) | set(NUMBER_WORDS)
    ids = set()
    for token, index in tokenizer.get_vocab().items():
        text = tokenizer.convert_tokens_to_string([token]).strip().removesuffix(".")
        if text in words or (text.isdigit() and len(text) <= 3):
            ids.add(index)
    return ids


def content_mask(tokenizer) -> torch.Tensor:
    """A bool per vocabulary id: True for the :func:`content_token_ids`."""
    mask = torch.zeros(len(tokenizer), dtype=torch.bool)
    mask[sorted(content_token_ids(tokenizer))] = True
    return mask


def token_weights(labels: torch.Tensor, content: torch.Tensor, weight: float) -> torch.Tensor:
    """Per-position weights of the next-token targets ``labels[:, 1:]``: 0 where there is no
    target, `weight` on content tokens (`content`: a bool lookup by id), 1 elsewhere.

    >>> labels = torch.tensor([[-100, 5, 7, -100]])
    >>> token_weights(labels, torch.tensor([False] * 5 + [True, False, False]), 4.0).tolist()
    [[4.0, 1.0, 0.0]]
    """
    targets = labels[:, 1:]
    known = targets != IGNORE
    is_content = content[targets.clamp(min=0)] & known
    return known.float() + (weight - 1.0) * is_content.float()


def weighted_loss(model, batch: dict[str, torch.Tensor], weights: torch.Tensor, head=None):
    """(weighted next-token loss, auxiliary frame loss or None, frame accuracy or None).

    The token loss is ``sum(w * ce) / sum(w)`` over the batch, computed only where a weight
    is positive. With `head` and images, each frame's colour and shape are predicted from
    its visual tokens (``batch["frame_labels"]``: one (colour, shape) row per image). Rows
    that open with the same tokens (every main-agent row's system prompt) have that prefix
    run once for the batch (:func:`shared_prefix`); the result is the same.
    """
    inner = model.model
    vision = aux = accuracy = None
    if "pixel_values" in batch:
        vision = inner.get_image_features(
            batch["pixel_values"], batch["image_grid_thw"], return_dict=True
        )
        if head is not None and "frame_labels" in batch:
            aux, accuracy = frame_loss(head, vision.pooler_output, batch["frame_labels"])
    start = min(shared_prefix(batch["input_ids"]), int(first_target(weights)))
    if start >= MIN_SHARED and batch["input_ids"].shape[0] > 1:
        hidden = _hidden_with_shared_prefix(inner, batch, vision, start)
    else:
        extra = {}
        if vision is not None:
            extra = {
                "mm_encoder_outputs": {"image": vision},
                "image_grid_thw": batch["image_grid_thw"],
            }
        hidden = inner(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            mm_token_type_ids=batch["mm_token_type_ids"],
            **extra,
        ).last_hidden_state
        start = 0
    # hidden[:, t] predicts token start + t + 1
    keep = weights[:, start:] > 0
    logits = model.lm_head(hidden[:, : keep.shape[1]][keep]).float()
    targets = batch["labels"][:, 1 + start :][keep]
    losses = torch.nn.functional.cross_entropy(logits, targets, reduction="none")
    w = weights[:, start:][keep]
    return (losses * w).sum() / w.sum().clamp(min=1e-6), aux, accuracy


MIN_SHARED = 32  # shorter shared prefixes are not worth a second pass


def shared_prefix(input_ids: torch.Tensor) -> int:
    """How many leading tokens every row of the batch has in common.

    >>> shared_prefix(torch.tensor([[1, 2, 3, 4], [1, 2, 5, 4]]))
    2
    """
    same = (input_ids == input_ids[:1]).all(dim=0)
    return int(same.long().cumprod(0).sum())


def first_target(weights: torch.Tensor) -> int:
    """The first position (of ``labels[:, 1:]``) that any row trains on."""
    columns = (weights > 0).any(dim=0).nonzero()
    return int(columns[0]) if len(columns) else weights.shape[1]


def _hidden_with_shared_prefix(inner, batch, vision, start: int) -> torch.Tensor:
    """The last hidden states from position `start` on, the first `start` tokens (the same in
    every row, no image among them) run once and their keys and values broadcast to the
    batch. Gradients flow through the shared pass as through the rows'."""
    from transformers import DynamicCache

    ids, mask = batch["input_ids"], batch["attention_mask"]
    if vision is not None and (ids[:, :start] == inner.config.image_token_id).any():
        raise ValueError("the shared prefix holds an image")
    positions, _ = inner.get_rope_index(
        ids,
        batch["mm_token_type_ids"],
        image_grid_thw=batch.get("image_grid_thw"),
        attention_mask=mask,
    )
    text = inner.language_model
    cache = DynamicCache(config=text.config)
    text(
        inputs_embeds=text.embed_tokens(ids[:1, :start]),
        position_ids=positions[:, :1, :start],
        attention_mask=mask[:1, :start],
        cache=cache,
        use_cache=True,
    )
    rows = ids.shape[0]
    for layer in cache.layers:
        layer.keys = layer.keys.expand(rows, -1, -1, -1)
        layer.values = layer.values.expand(rows, -1, -1, -1)
    embeds = text.embed_tokens(ids[:, start:])
    extra = {}
    if vision is not None:
        image = ids[:, start:] == inner.config.image_token_id
        features = torch.cat(vision.pooler_output).to(embeds.dtype)
        embeds = embeds.masked_scatter(image[..., None].expand_as(embeds), features)
        extra = {
            "visual_pos_masks": image,
            "deepstack_visual_embeds": [torch.cat(f) for f in vision.deepstack_features],
        }
    return text(
        inputs_embeds=embeds,
        position_ids=positions[:, :, start:],
        attention_mask=mask,
        cache=cache,
        use_cache=True,
        **extra,
    ).last_hidden_state


def frame_loss(head, per_image: Sequence[torch.Tensor], labels: torch.Tensor):
    """Cross-entropy of each frame's colour and shape (log-sum-exp over its tokens of the
    head's logits), and the share of frames whose both are right."""
    if len({len(tokens) for tokens in per_image}) == 1:  # one frame size: one product
        logits = head(torch.stack(list(per_image)))
        pooled = torch.logsumexp(logits, dim=1) - math.log(logits.shape[1])
    else:
        pooled = torch.stack(
            [torch.logsumexp(head(t), dim=0) - math.log(len(t)) for t in per_image]
        )
    split = len(benchmark.COLOURS) + 1
    colours, shapes = pooled[:, :split], pooled[:, split:]
    ce = torch.nn.functional.cross_entropy
    loss = ce(colours, labels[:, 0]) + ce(shapes, labels[:, 1])
    right = (colours.argmax(-1) == labels[:, 0]) & (shapes.argmax(-1) == labels[:, 1])
    return loss, right.float().mean().item()


def frame_head(model) -> torch.nn.Linear:
    """The training-only head: visual token -> colour (none + 4) and shape (none + 4) logits."""
    width = model.config.vision_config.out_hidden_size
    return torch.nn.Linear(width, len(benchmark.COLOURS) + len(benchmark.SHAPES) + 2)


def linear_patch_embed(model) -> None:
    """Run the vision patch embedding as the matrix product it equals (same weights; the
    Conv3d's stride is its kernel), on this model instance only."""
    embed = model.model.visual.patch_embed

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        weight = self.proj.weight.view(self.embed_dim, -1)
        flat = hidden_states.reshape(-1, weight.shape[1]).to(weight.dtype)
        return torch.nn.functional.linear(flat, weight, self.proj.bias)

    embed.forward = types.MethodType(forward, embed)
