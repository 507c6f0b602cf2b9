"""TRL's ``GRPOTrainer``, taught two things a graph episode needs (``training.trl.rollout``):

1. Images. TRL builds a VLM's forward inputs by running its processor over dataset images;
   the graph's frames are decoded inside the episode, so the rollout's own image tensors
   (``pixel_values``, ``image_grid_thw``, one image count per row, ``mm_token_type_ids``
   from the ids) go into every forward: the reference and old-policy passes TRL makes while
   scoring, and the loss pass.
2. More than one sequence per episode. TRL takes one completion per prompt entry; the rows
   an episode adds (a broken chain of main-agent turns, sub-agent calls under
   ``train_subagents``) are appended to the scored batch with their episode's advantage, and
   their reference / old-policy log-probs (and vLLM importance weights) computed as TRL
   computes them for the first rows. The row count is padded to a multiple of
   ``steps_per_generation`` with fully masked copies, since TRL splits the batch evenly.

``training.trl.rollout.policy_model`` hands the rollout a ``ChatModel`` over the trainer's
generation backend.
Transformers generation needs unsharded weights on every rank: episodes make different
numbers of calls per rank, so per-call collectives (FSDP, ZeRO-3 without gathering) would
hang; use vLLM there (refused at construction otherwise).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from accelerate.utils import gather
from trl import GRPOTrainer
from trl.models import unwrap_model_for_generation
from trl.models.utils import disable_gradient_checkpointing

from serving.engine import ChatRenderer, never_generated
from training.policy import Backend, Row
from training.trl.backends import TransformersBackend, VLLMColocateBackend, VLLMServerBackend
from training.trl.rollout import ParaVTRollout


class ParaVTGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` whose rollout is the graph (``ParaVTRollout``); see the module docstring."""

    def __init__(
        self, *args, rollout: ParaVTRollout, renderer: ChatRenderer, max_batch: int = 64, **kwargs
    ) -> None:
        super().__init__(*args, rollout_func=rollout, **kwargs)
        self.paravt, self.renderer, self.max_batch = rollout, renderer, max_batch
        self._pending: list[Row] | None = None
        sharded = self.is_fsdp_enabled or (
            self.is_deepspeed_enabled
            and not self.args.ds3_gather_for_generation
            and self.accelerator.state.deepspeed_plugin.zero_stage == 3
        )
        if not self.use_vllm and sharded and self.accelerator.num_processes > 1:
            raise ValueError(
                "transformers generation needs the whole policy on every rank (FSDP or ZeRO-3 "
                "without ds3_gather_for_generation would hang): pass --generation vllm-server "
                "or vllm-colocate"
            )
        if (
            self.use_vllm
            and self.vllm_mode == "colocate"
            and (self.args.vllm_tensor_parallel_size > 1 or self.args.vllm_enable_sleep_mode)
        ):
            raise ValueError("graph rollouts need colocated vLLM at tensor parallel 1, no sleep")

    @contextmanager
    def generation_backend(self, eos_ids: Sequence[int]) -> Iterator[Backend]:
        """TRL's generation backend for one rollout: vLLM as configured, else ``generate`` on
        the policy unwrapped for generation (ZeRO-3 weights gathered)."""
        if self.use_vllm:
            kind = VLLMServerBackend if self.vllm_mode == "server" else VLLMColocateBackend
            yield kind(self.vllm_generation, self.max_batch)
            return
        tok, args = self.renderer.tokenizer, self.args
        with unwrap_model_for_generation(
            self.model_wrapped,
            self.accelerator,
            gather_deepspeed3_params=args.ds3_gather_for_generation,
            gradient_checkpointing_kwargs=args.gradient_checkpointing_kwargs,
        ) as model:
            yield TransformersBackend(
                model,
                eos_ids=eos_ids,
                pad_id=tok.pad_token_id,
                image_token_id=self.renderer.image_token_id,
                suppress=never_generated(tok, model.config.get_text_config().vocab_size),
                max_batch=self.max_batch,
                autocast=self.accelerator.autocast,
            )

    # --- images in every forward ----------------------------------------------------------

    def _vision(self, rows: Sequence[Row]) -> dict:
        with_images = [r.vision for r in rows if r.images]
        if not with_images:
            return {}
        device = self.accelerator.device
        return {
            "pixel_values": torch.cat([v["pixel_values"] for v in with_images]).to(device),
            "image_grid_thw": torch.cat([v["image_grid_thw"] for v in with_images]).to(device),
            "num_images": [r.images for r in rows],
        }

    def _get_per_token_logps_and_entropies(
        self, model, input_ids, attention_mask, logits_to_keep, batch_size=None, **kwargs
    ):
        if kwargs.get("pixel_values") is None and self._pending is not None:
            kwargs.update(self._vision(self._pending))  # TRL's scoring passes, first rows
        grid = kwargs.get("image_grid_thw")
        if grid is not None and grid.numel() == 0:  # a micro-batch of image-less rows
            kwargs.update(pixel_values=None, image_grid_thw=None, num_images=None)
        elif grid is not None and kwargs.get("mm_token_type_ids") is None:
            kwargs["mm_token_type_ids"] = (input_ids == self.renderer.image_token_id).long()
        return super()._get_per_token_logps_and_entropies(
            model, input_ids, attention_mask, logits_to_keep, batch_size, **kwargs
        )

    def _generate(self, prompts):
        out = super()._generate(prompts)  # runs the rollout
        self._pending = [episode.rows[0] for episode in self.paravt.last]
        for name, value in sorted(self.paravt.metrics().items()):
            self._log_metric(f"paravt/{name}", float(value))
        return out

    def _generate_and_score_completions(self, inputs):
        try:
            output = super()._generate_and_score_completions(inputs)
            output.update(self._vision(self._pending))
            return self._append_rows(output)
        finally:
            self._pending = None

    # --- the rows an episode adds -----------------------------------------------------------

    def _append_rows(self, output: dict) -> dict:
        extra = [(i, row) for i, e in enumerate(self.paravt.last) for row in e.extra_rows]
        first, device = self._pending, self.accelerator.device
        # Every rank gets as many rows (sharded forwards are collective, one per chunk), a
        # multiple of steps_per_generation (TRL splits the batch into equal parts).
        most = int(gather(torch.tensor([len(extra)], device=device)).max())
        while len(extra) < most or (len(first) + len(extra)) % self.args.steps_per_generation:
            extra.append((0, (extra[-1][1] if extra else first[0]).masked()))
        if not extra:
            return output
        rows, owner = [row for _, row in extra], torch.tensor([i for i, _ in extra])
        pad = self._tokenizer.pad_token_id
        width_p = max(output["prompt_ids"].size(1), *(len(r.prompt_ids) for r in rows))
        width_c = max(output["completion_ids"].size(1), *(len(r.completion_ids) for r in rows))

        def padded(seqs, width, value, left=False, dtype=torch.long):
            out = torch.full((len(seqs), width), value, dtype=dtype)
            for k, seq in enumerate(seqs):
                if seq:
                    target = out[k, width - len(seq) :] if left else out[k, : len(seq)]
                    target.copy_(torch.tensor(seq, dtype=dtype))
            return out.to(device)

        new = {
            "prompt_ids": padded([r.prompt_ids for r in rows], width_p, pad, left=True),
            "prompt_mask": padded([(1,) * len(r.prompt_ids) for r in rows], width_p, 0, left=True),
            "completion_ids": padded([r.completion_ids for r in rows], width_c, pad),
            "completion_mask": padded([(1,) * len(r.completion_ids) for r in rows], width_c, 0),
            "tool_mask": padded([r.env_mask for r in rows], width_c, 0),
            "advantages": output["advantages"][owner.to(output["advantages"].device)],
        }
        if self.mask_truncated_completions:
            ends = {*self.eos_token_ids, pad}
            cut = torch.tensor([r.completion_ids[-1] not in ends for r in rows], device=device)
            new["tool_mask"] = new["tool_mask"] * (~cut).unsqueeze(1).long()
        if "sampling_per_token_logps" in output:
            new["sampling_per_token_logps"] = padded(
                [r.logprobs for r in rows], width_c, 0.0, dtype=torch.float32
            )
        new.update(self._score_rows(new, output, rows, width_c))

        merged = dict(output)
        for key, value in new.items():
            old = output.get(key)
            if key == "importance_sampling_ratio" and old is not None and old.size(1) == 1:
                merged[key] = torch.cat([old, value])
                continue
            if old is not None and old.dim() == 2 and key.startswith("prompt"):
                fill = pad if key == "prompt_ids" else 0
                old = F.pad(old, (width_p - old.size(1), 0), value=fill)
            elif old is not None and old.dim() == 2:
                fill = pad if key == "completion_ids" else 0
                old = F.pad(old, (0, width_c - old.size(1)), value=fill)
            merged[key] = value if old is None else torch.cat([old, value.to(old.dtype)])
        vision = self._vision(list(first) + rows)
        merged.update(vision)
        if not vision:
            for key in ("pixel_values", "image_grid_thw", "num_images"):
                merged.pop(key, None)
        loss_mask = merged["completion_mask"] * merged["tool_mask"]
        merged["num_items_in_batch"] = gather(loss_mask.sum()).sum()
        return merged

    def _score_rows(self, new: dict, output: dict, rows: list[Row], width_c: int) -> dict:
        """Reference / old-policy log-probs (and vLLM importance weights) of the new rows,
        computed where TRL computed them for the first rows."""
        ids = torch.cat([new["prompt_ids"], new["completion_ids"]], dim=1)
        mask = torch.cat([new["prompt_mask"], new["completion_mask"]], dim=1)
        kwargs = {"batch_size": self.args.per_device_train_batch_size, **self._vision(rows)}
        out = {}
        with (
            torch.no_grad(),
            disable_gradient_checkpointing(self.model, self.args.gradient_checkpointing_kwargs),
        ):
            if "old_per_token_logps" in output:
                out["old_per_token_logps"], _, _ = self._get_per_token_logps_and_entropies(
                    self.model, ids, mask, width_c, **kwargs
                )
            if "ref_per_token_logps" in output:
                if self.ref_model is None:
                    raise NotImplementedError("extra rows with a PEFT reference adapter")
                ref = self.ref_model
                out["ref_per_token_logps"], _, _ = self._get_per_token_logps_and_entropies(
                    ref, ids, mask, width_c, **kwargs
                )
        if "importance_sampling_ratio" in output:
            out["importance_sampling_ratio"] = self._importance(
                out["old_per_token_logps"],
                new["sampling_per_token_logps"],
                new["completion_mask"] * new["tool_mask"],
            )
        return out

    def _importance(self, old: torch.Tensor, sampled: torch.Tensor, mask: torch.Tensor):
        """TRL's vLLM importance-sampling correction (its four modes) for the new rows."""
        mode = self.vllm_importance_sampling_mode
        diff = torch.nan_to_num((old - sampled) * mask, nan=0.0)
        if mode.startswith("sequence"):
            diff = diff.sum(dim=-1, keepdim=True)
        ratio = torch.exp(diff)
        low, high = self.vllm_importance_sampling_clip_min, self.vllm_importance_sampling_clip_max
        if mode.endswith("truncate"):
            return torch.clamp(ratio, min=low, max=high)
        low = -float("inf") if low is None else low
        high = float("inf") if high is None else high
        return ratio.masked_fill((ratio < low) | (ratio > high), 0.0)
