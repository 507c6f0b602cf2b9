"""A few bf16 PARA-GRPO steps on a CUDA GPU through the TRL entry point (training.trl.grpo),
with transformers generation, on a Qwen3-VL-architecture model of about 1.2B parameters built
from a config (random weights: the step's cost, not its learning, is what is measured).

    python bench/gpu_grpo.py [--steps 4]   # -> bench/gpu_grpo.json

Writes the time of each step, generated tokens per second, and peak GPU memory. Needs CUDA
and this repo's [train] extra (torch, transformers, trl, accelerate, datasets) plus the graph's
core; refuses at once (exit 1), saying so, on a machine without CUDA. Everything else (the
tokenizer, the needle videos) is made here. ``--smoke`` runs the same code on the CPU with the
tiny model in float32 for one step (tests/training/test_trl_launch.py), writing to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULT = Path(__file__).with_suffix(".json")


def cuda_or_exit() -> str:
    """The GPU's name, or a clear refusal (exit 2) when there is none."""
    import torch

    if not torch.cuda.is_available():
        raise SystemExit(
            "bench/gpu_grpo.py times bf16 GRPO steps on a CUDA GPU and this machine has none "
            "(torch.cuda.is_available() is False). The CPU path is tested by "
            "tests/training/test_trl_grpo.py."
        )
    return torch.cuda.get_device_name(0)


def build_model(out: Path, *, smoke: bool) -> int:
    """A ~1.2B Qwen3-VL (24 vision blocks, 20 text layers of 2048; the tiny one with
    ``smoke``) with the project's tokenizer, saved as a Hugging Face folder; returns its
    parameter count."""
    import torch
    from transformers import GenerationConfig, Qwen3VLForConditionalGeneration

    from serving.tiny_model import TINY, Size, qwen3vl_config, save_processor
    from serving.tokenizer import build_tokenizer

    size = (
        TINY
        if smoke
        else Size(
            vision_depth=24,
            vision_hidden=1024,
            vision_heads=16,
            position_embeddings=2304,
            text_hidden=2048,
            text_intermediate=6144,
            text_layers=20,
            text_heads=16,
            head_dim=128,
            max_positions=32768,
            rope_theta=5_000_000.0,
            mrope_section=(24, 20, 20),
        )
    )
    tokenizer = build_tokenizer()
    torch.manual_seed(0)
    model = Qwen3VLForConditionalGeneration(qwen3vl_config(tokenizer, size))
    model = model if smoke else model.to(torch.bfloat16)
    eos = [tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")]
    model.generation_config = GenerationConfig(eos_token_id=eos, pad_token_id=eos[1])
    model.save_pretrained(out)
    save_processor(tokenizer, out)
    return sum(p.numel() for p in model.parameters())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument("--json", type=Path, default=RESULT)
    parser.add_argument("--smoke", action="store_true", help="the tiny model on the CPU")
    args = parser.parse_args()
    gpu = "cpu (smoke)" if args.smoke else cuda_or_exit()

    import torch

    from graphs.context import Context
    from training.para_grpo import ParaGRPOConfig
    from training.rollout import needle_prompts
    from training.trl import grpo as trl_grpo

    work = Path(tempfile.mkdtemp(prefix="paravt-gpu-grpo-"))
    began = time.perf_counter()
    params = build_model(work / "model", smoke=args.smoke)
    needle_prompts(work / "data", n_videos=2, duration=60.0)
    built_s = time.perf_counter() - began
    run = trl_grpo.TRLRunConfig(
        model=str(work / "model"),
        output_dir=str(work / "run"),
        data=str(work / "data"),
        n_videos=0,
        steps=args.steps,
        prompts_per_step=2,
        bf16=not args.smoke,
        gradient_checkpointing=True,
    )
    algo = ParaGRPOConfig(
        arm="para_grpo",
        group_size=args.group_size,
        max_new_tokens=args.max_new_tokens,
        frame_choices=(4, 8, 16),
    )
    context = replace(Context(), max_turns=1, summary_max_tokens=64)
    if not args.smoke:
        torch.cuda.reset_peak_memory_stats()
    log = trl_grpo.train(run, algo, context)
    steps = [json.loads(line) for line in log.read_text().splitlines()]
    step_s = [float(s["step_time"]) for s in steps]
    episodes = 2 * args.group_size
    generated = [float(s["completions/mean_length"]) * episodes for s in steps]
    seen = [float(s["num_tokens"]) for s in steps]  # TRL's running total, prompts included
    processed = [b - a for a, b in zip([0.0, *seen], seen, strict=False)]
    report = {
        "gpu": gpu,
        "parameters": params,
        "dtype": "float32" if args.smoke else "bfloat16",
        "steps": len(steps),
        "episodes_per_step": episodes,
        "max_new_tokens": args.max_new_tokens,
        "build_s": round(built_s, 1),
        "step_s": [round(s, 2) for s in step_s],
        "generated_tokens_per_s": [round(g / s, 1) for g, s in zip(generated, step_s, strict=True)],
        "processed_tokens_per_s": [round(t / s, 1) for t, s in zip(processed, step_s, strict=True)],
        "peak_memory_gb": None
        if args.smoke
        else round(torch.cuda.max_memory_allocated() / 2**30, 2),
        "reward": [s.get("reward") for s in steps],
    }
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
