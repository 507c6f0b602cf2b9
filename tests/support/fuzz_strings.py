"""Model-like garbage for fuzzing the parser and the scorers: seeded, reproducible strings.

Each string mixes fragments a model really writes (tags of the protocol, half-written tool
calls, answer letters, times and intervals, numbers, prose) with noise (random unicode,
control characters, very long runs, unbalanced brackets).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

FRAGMENTS = (
    "<think>",
    "</think>",
    "<answer>",
    "</answer>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<|im_end|>",
    "<|im_start|>assistant\n",
    '{"name": "crop_video", "arguments": {"start_time": ',
    '"end_time": ',
    "}}",
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    "```json\n",
    "```",
    "\n",
    "\t",
    " ",
    "A",
    "B",
    "C",
    "D",
    "E",
    "(A)",
    "A.",
    "Answer: ",
    "The answer is ",
    "option ",
    "The event happens in the ",
    " - ",
    " seconds",
    "s",
    "12.5",
    "-3",
    "1e308",
    "nan",
    "inf",
    "0",
    "00:01:02",
    "1:2:3",
    "%",
    "yes",
    "no",
    "None",
    "null",
    "true",
    "TRUE",
    "ⅷ",
    "٣",
    "零",
    "\u200b",
    "\ufeff",
    "\x00",
    "\x1b[31m",
    "\\",
    "\\n",
    "$",
    "**",
    "- ",
    "1. ",
    "Final answer:",
    "boxed{",
    "\\boxed{A}",
)


def _noise(rng: random.Random) -> str:
    kind = rng.randrange(5)
    if kind == 0:
        return "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(1, 40)))
    if kind == 1:
        return "".join(chr(rng.randrange(0, 32)) for _ in range(rng.randrange(1, 5)))
    if kind == 2:
        return rng.choice("A<{[( 9.-") * rng.randrange(50, 3000)
    if kind == 3:
        return f"{rng.uniform(-1e6, 1e6):.{rng.randrange(0, 6)}f}"
    return rng.choice(("", " ", "\n\n", "word " * rng.randrange(1, 80)))


def fuzz_strings(n: int, seed: int = 0) -> Iterator[str]:
    """`n` strings, the same for the same seed."""
    rng = random.Random(seed)
    for _ in range(n):
        parts = []
        for _ in range(rng.randrange(0, 24)):
            parts.append(rng.choice(FRAGMENTS) if rng.random() < 0.7 else _noise(rng))
        yield "".join(parts)
