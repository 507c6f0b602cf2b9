"""The question text the ParaVT release writes for each of its seven benchmarks
(EvolvingLMMs-Lab/ParaVT@cf55249 ``paravt/eval/utils.py`` ``load_samples``), built from the
samples this project's loaders read from the same data.

The release's quirks are kept: Video-MME's options, which already carry their letters, get a
second one (``A. A. ...``); videomme with subtitles puts the whole subtitle file before the
question (not the cues at the sampled frames); every MMVU item is asked as multiple choice.
The agentic modes' ``The video path for this video is: ...`` is added by the protocol
(`agents.protocols.release_eval`), as the driver adds it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from agents.protocols.release_eval import (
    charades_question,
    mcq_instruction,
    mcq_question,
    subtitled,
)
from evals.sample import Sample

_TAG = re.compile(r"<[^>]+>")
_BLOCK_BREAK = re.compile(r"\n\s*\n")


def srt_text(path: str | None) -> str:
    """The release's ``parse_srt``: every cue's text lines, tags removed, one per line."""
    if not path or not Path(path).exists():
        return ""
    try:
        content = Path(path).read_text(encoding="utf-8", errors="ignore")
    except OSError:
        return ""
    lines = []
    for block in _BLOCK_BREAK.split(content.strip()):
        parts = block.strip().split("\n")
        if len(parts) >= 3:
            lines += [clean for line in parts[2:] if (clean := _TAG.sub("", line).strip())]
    return "\n".join(lines)


def _bare(options: tuple[str, ...]) -> list[str]:
    """Option texts without this project's "A. " prefix."""
    return [o[3:] if o[1:3] == ". " else o for o in options]


def videomme(sample: Sample, mode: str) -> str:
    options = sample.extra.get("raw_options") or _bare(sample.options)
    text = mcq_question(sample.question, options, mode)
    if "subtitles" in sample.extra:  # loaded with subtitles: the release's videomme_wsub
        return subtitled(text, srt_text(sample.extra.get("subtitle_path")))
    return text


def options_task(sample: Sample, mode: str) -> str:
    """LongVideoBench and MLVU: the question, then the candidates lettered."""
    question = sample.extra.get("raw_question", sample.question)
    return mcq_question(question, _bare(sample.options), mode)


def lvbench(sample: Sample, mode: str) -> str:
    question = sample.extra.get("raw_question", sample.question)
    return f"{question}\n{mcq_instruction(mode)}"


def mmvu(sample: Sample, mode: str) -> str:
    options = "\n".join(sample.options)  # already "A. text", empty choices left out
    return f"Question: {sample.question}\nOptions:\n{options}\n{mcq_instruction(mode)}"


def charades(sample: Sample, mode: str) -> str:
    return charades_question(sample.extra.get("caption", sample.question))


RELEASE_PROMPTS: dict[str, Callable[[Sample, str], str]] = {
    "videomme": videomme,
    "longvideobench": options_task,
    "lvbench": lvbench,
    "mlvu": options_task,
    "mmvu": mmvu,
    "charades": charades,
}
"""The benchmarks the release evaluates; ``videomme`` with ``subtitles=true`` is its
``videomme_wsub``."""


def release_prompt(task: str, sample: Sample, mode: str) -> str:
    try:
        build = RELEASE_PROMPTS[task]
    except KeyError:
        known = ", ".join(RELEASE_PROMPTS)
        raise ValueError(
            f"--protocol release-eval has no question text for {task}: the release evaluates "
            f"{known}; use --protocol paravt for {task}"
        ) from None
    return build(sample, mode)
