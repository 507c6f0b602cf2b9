"""The tiny Qwen3-VL checkpoint: deterministic, small, loadable offline, Qwen-style chat."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from serving.tiny_model import build_tiny_model  # noqa: E402
from serving.tokenizer import PROTOCOL_TOKENS, SPECIAL_TOKENS  # noqa: E402


def _weights_checksum(model) -> str:
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """Two builds with seed 0 and one with seed 1."""
    root = tmp_path_factory.mktemp("tiny")
    return {
        name: build_tiny_model(root / name, seed=seed)
        for name, seed in (("a", 0), ("b", 0), ("c", 1))
    }


@pytest.fixture(scope="module")
def tokenizer(builds):
    return transformers.AutoTokenizer.from_pretrained(builds["a"])


@pytest.fixture(scope="module")
def model(builds):
    return transformers.AutoModelForImageTextToText.from_pretrained(builds["a"]).eval()


def test_same_seed_same_checkpoint_other_seed_other_weights(builds):
    load = transformers.AutoModelForImageTextToText.from_pretrained
    sums = {name: _weights_checksum(load(path)) for name, path in builds.items()}
    assert sums["a"] == sums["b"]
    assert sums["a"] != sums["c"]
    vocabs = [json.loads((p / "tokenizer.json").read_text())["model"] for p in builds.values()]
    assert vocabs[0] == vocabs[1] == vocabs[2]


def test_architecture_and_parameter_count(model, tokenizer):
    assert type(model).__name__ == "Qwen3VLForConditionalGeneration"
    n_params = sum(p.numel() for p in model.parameters())
    assert 200_000 <= n_params <= 1_000_000
    assert model.config.text_config.vocab_size == len(tokenizer)
    assert 2_000 <= len(tokenizer) <= 8_000
    assert model.config.image_token_id == tokenizer.convert_tokens_to_ids("<|image_pad|>")


@pytest.mark.parametrize("tag", SPECIAL_TOKENS + PROTOCOL_TOKENS)
def test_tags_are_single_tokens(tokenizer, tag):
    ids = tokenizer.encode(tag, add_special_tokens=False)
    assert len(ids) == 1
    assert tokenizer.decode(ids, skip_special_tokens=False) == tag


def test_protocol_tags_survive_decoding_and_json_round_trips(tokenizer):
    call = '{"name": "crop_video", "arguments": {"start_time": 12.5, "end_time": 30.0}}'
    text = f"<think>\nLook closer.\n</think>\n<tool_call>\n{call}\n</tool_call><|im_end|>"
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert tokenizer.decode(ids, skip_special_tokens=False) == text
    assert tokenizer.decode(ids, skip_special_tokens=True) == text.removesuffix("<|im_end|>")
    assert tokenizer.eos_token == "<|im_end|>"


def test_chat_template_renders_images_in_place(tokenizer):
    messages = [
        {"role": "system", "content": "Watch closely."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<0.0 seconds>"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,"}},
                {"type": "text", "text": "<12.5 seconds>"},
                {"type": "image"},
                {"type": "text", "text": "What happens?"},
            ],
        },
    ]
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    image = "<|vision_start|><|image_pad|><|vision_end|>"
    assert text == (
        "<|im_start|>system\nWatch closely.<|im_end|>\n"
        f"<|im_start|>user\n<0.0 seconds>{image}<12.5 seconds>{image}What happens?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_chat_template_continues_a_final_assistant_message(tokenizer):
    messages = [
        {"role": "user", "content": "Question?"},
        {"role": "assistant", "content": "<think>\n"},
    ]
    text = tokenizer.apply_chat_template(messages, tokenize=False, continue_final_message=True)
    assert text == "<|im_start|>user\nQuestion?<|im_end|>\n<|im_start|>assistant\n<think>\n"


def test_chat_template_renders_tool_turns(tokenizer):
    call = {"name": "crop_video", "arguments": {"start_time": 1.0, "end_time": 2.0}}
    messages = [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": call}]},
        {"role": "tool", "content": "a note"},
        {"role": "tool", "content": "another"},
    ]
    text = tokenizer.apply_chat_template(messages, tokenize=False)
    assert '<tool_call>\n{"name": "crop_video", "arguments": {"start_time": 1.0' in text
    assert text.endswith(
        "<|im_start|>user\n<tool_response>\na note\n</tool_response>\n"
        "<tool_response>\nanother\n</tool_response><|im_end|>\n"
    )
    masked = tokenizer.apply_chat_template(
        messages[:2], tokenize=True, return_dict=True, return_assistant_tokens_mask=True
    )
    kept = [i for i, m in zip(masked["input_ids"], masked["assistant_masks"], strict=True) if m]
    assert tokenizer.decode(kept).startswith("<tool_call>")


def test_checkpoint_runs_an_image_forward_pass(builds, model, tokenizer):
    from PIL import Image

    processor = transformers.AutoImageProcessor.from_pretrained(builds["a"])
    vision = processor(images=[Image.new("RGB", (224, 224), (200, 30, 30))], return_tensors="pt")
    n_image = int(vision["image_grid_thw"][0].prod()) // processor.merge_size**2
    assert n_image == 49  # 224x224 keeps its size: 14x14 patches of 16 px, merged 2x2
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What?"}]}],
        tokenize=False,
        add_generation_prompt=True,
    )
    text = text.replace("<|image_pad|>", "<|image_pad|>" * n_image)
    input_ids = torch.tensor([tokenizer.encode(text, add_special_tokens=False)])
    mm_types = (input_ids == model.config.image_token_id).long()
    with torch.no_grad():
        out = model(input_ids=input_ids, mm_token_type_ids=mm_types, **vision)
    assert out.logits.shape == (1, input_ids.shape[1], len(tokenizer))
    assert torch.isfinite(out.logits).all()


@pytest.mark.skipif(
    importlib.util.find_spec("torchvision") is None,
    reason="AutoProcessor builds Qwen3-VL's video processor, which needs torchvision",
)
def test_auto_processor_loads(builds):
    processor = transformers.AutoProcessor.from_pretrained(builds["a"])
    assert type(processor).__name__ == "Qwen3VLProcessor"
