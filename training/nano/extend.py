"""Give a trained nano the whole tokens it lacks, keeping every id and weight it has.

The shipped nano's tokenizer was trained before the verify gate existed, so it spells
``SUPPORTED`` in 9 tokens and ``UNSUPPORTED`` in 11, and the gate reads at most
``agents.verify.MAX_VERDICT_TOKENS`` of a reply. The roles stage (``training.nano.rebuild
--base``) starts from :func:`extend`'s copy of the base instead: the missing whole tokens
(:data:`training.nano.model.VERDICTS`, ...) are appended as new ids, so every old id and the
text it stands for stay as they were, and each new embedding row starts as the mean of the
rows of the spelling it replaces, so the new token first means what its pieces meant.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path

from training.nano import model as nano_model
from training.nano import stage_records
from training.nano.train import save_checkpoint

log = logging.getLogger(__name__)
#: Beside an extended copy: the weights it was extended from, so a later run can tell whether
#: the copy is of its own base.
EXTENDED_FROM = "extended_from.json"


def weights_sha256(checkpoint: str | Path) -> str:
    """The sha256 of a checkpoint folder's ``model.safetensors``."""
    return hashlib.sha256((Path(checkpoint) / "model.safetensors").read_bytes()).hexdigest()


def missing_tokens(tokenizer, tokens: Sequence[str]) -> list[str]:
    """The `tokens` that `tokenizer` does not already spell as one token."""
    return [t for t in tokens if len(tokenizer.encode(t, add_special_tokens=False)) != 1]


def extend(base: str | Path, out: str | Path, tokens: Sequence[str] = nano_model.VERDICTS) -> Path:
    """`base` with `tokens` as whole tokens, written into `out`; `base` itself when its
    tokenizer already spells each of them as one token. An `out` written before is reused
    if it was extended from these weights and spells them all, and refused (ValueError) if
    not."""
    import torch
    from transformers import AddedToken, AutoTokenizer, Qwen3VLForConditionalGeneration

    base, out = Path(base), Path(out)
    made_from = {"base_weights_sha256": weights_sha256(base)}
    if (out / "model.safetensors").exists():
        lacking = missing_tokens(AutoTokenizer.from_pretrained(out), tokens)
        if lacking:
            raise ValueError(
                f"{out} was extended by other tokens and lacks {len(lacking)} of these "
                f"(first {lacking[0]!r}): remove it to extend {base} again"
            )
        if stage_records.recorded(out / EXTENDED_FROM) != made_from:
            raise ValueError(f"{out} was not extended from {base}: remove it to extend {base}")
        return out
    tokenizer = AutoTokenizer.from_pretrained(base)
    new = missing_tokens(tokenizer, tokens)
    if not new:
        return base
    model = Qwen3VLForConditionalGeneration.from_pretrained(base, dtype=torch.float32).eval()
    spellings = {t: tokenizer.encode(t, add_special_tokens=False) for t in new}
    old_size = model.get_input_embeddings().weight.shape[0]
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in new])
    model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    with torch.no_grad():
        rows = model.get_input_embeddings().weight
        for token, pieces in spellings.items():
            rows[tokenizer.convert_tokens_to_ids(token)] = rows[pieces].mean(dim=0)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(out)
    save_checkpoint(model, base, out)  # and the base's processor configs, template, regime
    stage_records.write_record(out / EXTENDED_FROM, made_from)
    log.info(
        "extended %s by %d whole tokens (%s): vocab %d -> %d",
        base,
        len(new),
        ", ".join(map(repr, new[:4])) + (", ..." if len(new) > 4 else ""),
        old_size,
        len(tokenizer),
    )
    return out
