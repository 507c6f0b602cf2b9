"""Build a tiny, untrained Qwen3-VL checkpoint (model, tokenizer, processor) from a config, offline.

The checkpoint has the real Qwen3-VL architecture (vision tower with deepstack mergers,
interleaved M-RoPE text decoder) at a few hundred thousand parameters, a byte-level BPE
tokenizer trained here on a generated corpus, and a Qwen-style chat template. It loads with
``AutoTokenizer``, ``AutoImageProcessor`` and ``AutoModelForImageTextToText`` (and with
``AutoProcessor`` where torchvision is installed: Qwen3-VL's video processor needs it). It is
what the local server and the training smoke tests run on. Nothing is downloaded.

    python -m serving.tiny_model --out /tmp/tiny-qwen3vl --seed 0
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from serving.tokenizer import CHAT_TEMPLATE, SPECIAL_TOKENS, build_tokenizer

logger = logging.getLogger(__name__)

#: Vision geometry of Qwen3-VL: 16-pixel patches merged 2x2 into one visual token.
PATCH_SIZE = 16
MERGE_SIZE = 2
#: Pixel budget per image: 224x224 frames keep their size; at most 1280 visual tokens.
IMAGE_SIZE = {"shortest_edge": 64 * 64, "longest_edge": 1280 * 32 * 32}


def build_image_processor(size: dict[str, int] | None = None):
    """Qwen3-VL's image preprocessing on the torchvision-free (PIL) backend; `size` is the
    pixel budget ``{"shortest_edge": min, "longest_edge": max}``."""
    from transformers import Qwen2VLImageProcessorPil

    return Qwen2VLImageProcessorPil(
        patch_size=PATCH_SIZE,
        temporal_patch_size=2,
        merge_size=MERGE_SIZE,
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
        size=dict(size or IMAGE_SIZE),
    )


def _video_processor_config() -> dict:
    """Qwen3-VL's video processor settings, written as JSON (building it needs torchvision)."""
    return {
        "video_processor_type": "Qwen3VLVideoProcessor",
        "processor_class": "Qwen3VLProcessor",
        "patch_size": PATCH_SIZE,
        "temporal_patch_size": 2,
        "merge_size": MERGE_SIZE,
        "size": {"shortest_edge": 128 * 32 * 32, "longest_edge": 768 * 32 * 32},
        "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5],
        "do_resize": True,
        "do_rescale": True,
        "rescale_factor": 1 / 255,
        "do_normalize": True,
        "do_convert_rgb": True,
        "do_sample_frames": True,
        "fps": 2,
        "min_frames": 4,
        "max_frames": 768,
    }


def save_processor(tokenizer, out: Path, image_size: dict[str, int] | None = None) -> None:
    """Save tokenizer, chat template and image/video processor configs in Qwen3-VL's Hub layout.

    ``Qwen3VLProcessor`` cannot be built without torchvision (its video processor needs it), so
    the parts are saved one by one, in the layout of the Qwen3-VL Hub repositories; with
    torchvision installed ``AutoProcessor.from_pretrained`` assembles them.
    """
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(out)
    build_image_processor(image_size).save_pretrained(out)
    preprocessor = out / "preprocessor_config.json"
    config = json.loads(preprocessor.read_text())
    config["processor_class"] = "Qwen3VLProcessor"
    preprocessor.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    video = json.dumps(_video_processor_config(), indent=2, sort_keys=True) + "\n"
    (out / "video_preprocessor_config.json").write_text(video)


@dataclass(frozen=True)
class Size:
    """The sizes that differ between this project's small Qwen3-VL models."""

    vision_depth: int
    vision_hidden: int
    vision_heads: int
    position_embeddings: int
    text_hidden: int
    text_intermediate: int
    text_layers: int
    text_heads: int
    head_dim: int
    max_positions: int
    rope_theta: float
    mrope_section: tuple[int, int, int]  # sums to head_dim / 2


TINY = Size(2, 32, 2, 256, 64, 128, 2, 4, 16, 32768, 5_000_000.0, (4, 2, 2))


def qwen3vl_config(tokenizer, size: Size):
    """A Qwen3VLConfig of `size` (16-pixel patches merged 2x2, deepstack on vision layer 0,
    2 KV heads, tied embeddings), token ids taken from ``tokenizer``."""
    from transformers import Qwen3VLConfig

    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    return Qwen3VLConfig(
        vision_config={
            "depth": size.vision_depth,
            "hidden_size": size.vision_hidden,
            "intermediate_size": 2 * size.vision_hidden,
            "num_heads": size.vision_heads,
            "patch_size": PATCH_SIZE,
            "spatial_merge_size": MERGE_SIZE,
            "temporal_patch_size": 2,
            "out_hidden_size": size.text_hidden,
            "num_position_embeddings": size.position_embeddings,
            "deepstack_visual_indexes": [0],
        },
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": size.text_hidden,
            "intermediate_size": size.text_intermediate,
            "num_hidden_layers": size.text_layers,
            "num_attention_heads": size.text_heads,
            "num_key_value_heads": 2,
            "head_dim": size.head_dim,
            "max_position_embeddings": size.max_positions,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": size.rope_theta,
                "mrope_section": list(size.mrope_section),
                "mrope_interleaved": True,
            },
            "pad_token_id": ids["<|endoftext|>"],
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=True,
    )


def tiny_config(tokenizer):
    """A Qwen3VLConfig of a few hundred thousand parameters, token ids taken from ``tokenizer``."""
    return qwen3vl_config(tokenizer, TINY)


def build_tiny_model(out_dir: str | Path, *, seed: int = 0) -> Path:
    """Build and save the tiny Qwen3-VL checkpoint into ``out_dir``; return its path.

    The tokenizer is the same for every seed; the weights depend only on ``seed``.
    """
    import torch
    from transformers import GenerationConfig, Qwen3VLForConditionalGeneration

    started = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer()
    config = tiny_config(tokenizer)

    with torch.random.fork_rng(devices=[]):  # seed the init without touching the caller's RNG
        torch.manual_seed(seed)
        model = Qwen3VLForConditionalGeneration(config).eval()
    eos = [tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")]
    model.generation_config = GenerationConfig(
        eos_token_id=eos,
        pad_token_id=eos[1],
        do_sample=True,
        temperature=0.7,
        top_p=0.8,
        top_k=20,
    )
    model.save_pretrained(out)
    save_processor(tokenizer, out)
    n_params = sum(p.numel() for p in model.parameters())
    logger.info(
        "built tiny Qwen3-VL (%d parameters, vocab %d) in %s in %.1fs",
        n_params,
        len(tokenizer),
        out,
        time.perf_counter() - started,
    )
    return out


def main(argv: list[str] | None = None) -> None:
    """CLI: ``python -m serving.tiny_model --out DIR --seed 0``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="Checkpoint directory to write.")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the weight initialisation.")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is local; never ask the Hub
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    path = build_tiny_model(args.out, seed=args.seed)
    print(path)


if __name__ == "__main__":
    main()
