"""paravt-nano's architecture and tokenizer: Qwen3-VL at about 3M parameters, built offline.

The tokenizer is a byte-level BPE trained on the oracle traces' text, with every whole
second 0..600 as one token (a frame time, a window bound and an answer span are then one
token each to copy), each option opener ("\nA." .. "\nD.") as one token (the key the
option scan copies an option's text after), each lookup key of the notes as one token
(:data:`LOOKUP_KEYS`), and each of the verify gate's verdicts (:data:`VERDICTS`). The vision
tower sees 128x96 frames as 8x6 patches of 16 pixels, merged 2x2 into 12 visual tokens per
frame.

Weights start at a standard deviation of about one over the square root of the width
(:data:`INIT_STD`), not Hugging Face's 0.02, which is sized for widths of 768 and up: at
width 192 it left every signal so small that the copy circuits a lookup needs had not
formed after a thousand steps (see ``training.nano.warmup``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from agents import benchmark
from serving.tiny_model import Size, qwen3vl_config, save_processor
from serving.tokenizer import build_tokenizer
from training.nano import oracle

log = logging.getLogger(__name__)

BPE_VOCAB = 1024
WHOLE_SECONDS = tuple(str(s) for s in range(601))
#: An option's opener at the start of its line, as the question block and the scan write it.
OPTION_OPENERS = tuple(f"\n{letter}." for letter in benchmark.LETTERS)
#: The keys the main agent looks a note's value up by, each one token: " the cross is"
#: (-> its colour) and "Seen: red" (-> its shape). Within a video the shapes are distinct
#: and so are the colours, so each key occurs once among the notes, and the value is a
#: one-token induction copy. Spelt in several tokens ("the", " cross", " is"), the key's
#: last token " is" follows every note's shape, and the main agent copied the nearest
#: note's colour instead (``docs/nano.md``).
LOOKUP_KEYS = tuple(f" {oracle.restated_key(shape)}" for shape in benchmark.SHAPES) + tuple(
    f"{oracle.SEEN} {colour}" for colour in benchmark.COLOURS
)
#: The verify gate's three words, each one token: the verifier answers in one step.
VERDICTS = ("SUPPORTED", "UNSUPPORTED", "UNCERTAIN")
#: Every whole second after a space, one token (``rebuild --spaced-seconds``). With the
#: second alone a token, "from 94 to 99" is "from", " ", "94", " to", " ", "99": the token
#: before each number is the same space, so a copy keyed on it may take either number (the
#: main agent answered a span's end as its start). As " 94" the key is "from" or " to".
SPACED_SECONDS = tuple(f" {s}" for s in WHOLE_SECONDS)
#: The weights' initial standard deviation (text and vision), about 1 / sqrt(width).
INIT_STD = 0.08
#: The pixel budget of one frame: exactly the benchmark's 128x96 frames.
IMAGE_SIZE = {"shortest_edge": 32 * 32 * 4, "longest_edge": benchmark.WIDTH * benchmark.HEIGHT}


def nano_tokenizer(texts: Iterable[str]):
    """The BPE tokenizer trained on `texts`, whole seconds, option openers, lookup keys and
    verdicts as single tokens."""
    return build_tokenizer(
        list(texts),
        vocab_size=BPE_VOCAB,
        whole_tokens=OPTION_OPENERS + LOOKUP_KEYS + VERDICTS + WHOLE_SECONDS,
    )


#: Vision: 2 layers of width 128 (more pixels per token than the tiny model: shapes need it);
#: text: 4 layers of width 192, 6 heads; short contexts, so rope theta 10k.
NANO = Size(2, 128, 4, 64, 192, 512, 4, 6, 32, 4096, 10_000.0, (6, 5, 5))


def nano_config(tokenizer):
    """The Qwen3VLConfig of paravt-nano (token ids taken from `tokenizer`)."""
    config = qwen3vl_config(tokenizer, NANO)
    for part in (config, config.text_config, config.vision_config):
        part.initializer_range = INIT_STD
    return config


def build_nano(out_dir: str | Path, texts: Iterable[str], *, seed: int = 0) -> Path:
    """Write an untrained paravt-nano checkpoint (weights from `seed`) into `out_dir`."""
    import torch
    from transformers import GenerationConfig, Qwen3VLForConditionalGeneration

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = nano_tokenizer(texts)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen3VLForConditionalGeneration(nano_config(tokenizer)).eval()
    eos = [tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")]
    model.generation_config = GenerationConfig(
        eos_token_id=eos, pad_token_id=eos[1], do_sample=False
    )
    model.save_pretrained(out)
    save_processor(tokenizer, out, IMAGE_SIZE)
    n_params = sum(p.numel() for p in model.parameters())
    log.info("built paravt-nano (%d parameters, vocab %d) in %s", n_params, len(tokenizer), out)
    return out


def row_texts(rows: Iterable[dict]) -> Iterable[str]:
    """Every text part of every row: the tokenizer's training corpus."""
    for row in rows:
        for message in row["messages"]:
            for part in message["content"]:
                if part["type"] == "text":
                    yield part["text"]
