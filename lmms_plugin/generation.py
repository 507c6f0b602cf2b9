"""Where lmms-eval's task and this project's protocol meet: the run's settings, the question
block, and the reply lmms-eval gets back.

Settings, first found wins: a knob named in ``--model_args``; the task's ``gen_kwargs``
(``max_new_tokens`` caps each main-agent turn, as it caps each generation of a direct model;
``temperature`` and ``top_p`` sample the main agent); the served model's regime; Context's
defaults. Then the protocol's pins (release-eval samples at temperature 0 whatever the task
asks).

The question block: the task's prompt goes inside the protocol's question block, as a
benchmark's own prompt does in ``app.py eval run``; its lettered option lines make the
question multiple choice. With ``protocol=release-eval`` the release's own question text is
used for the benchmarks the release evaluates (`RELEASE_DOCS`); for any other task the
release has no text, and the task's prompt takes that place.

The reply: the final turn's text as the chat API returned it (lmms-eval strips the reasoning
itself), cut at the first of ``until``'s strings in the answer (after the reasoning and the
whitespace that follows it), where a server stops a direct answer; the reasoning and the
agent's tool turns are never cut. lmms-eval gives every task that names no ``until`` its
fewshot delimiter (a blank line), so by default an answer ends at its first blank line.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.prompts import implied_kind
from agents.question import Question
from evals.media import MediaIndex
from evals.release_prompts import release_prompt
from evals.sample import Sample
from evals.tasks import videomme
from graphs.chat_input import split_question
from graphs.context import Context, effective
from graphs.regime import fit_context, protocol_refusal
from lmms_plugin.docs import DocInput
from lmms_plugin.model_args import protocol_conflicts

log = logging.getLogger(__name__)

#: gen_kwargs key -> the Context knob it sets.
GEN_KNOBS = {"max_new_tokens": "max_new_tokens", "temperature": "temperature", "top_p": "top_p"}
REASONING_END = "</think>"


def gen_knobs(gen_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The Context values a task's generation settings stand for.

    >>> gen_knobs({"max_new_tokens": 16, "temperature": 0, "until": ["\\n\\n"], "num_beams": 1})
    {'max_new_tokens': 16, 'temperature': 0.0}
    """
    out: dict[str, Any] = {}
    for key, knob in GEN_KNOBS.items():
        if gen_kwargs.get(key) is not None:
            out[knob] = int(gen_kwargs[key]) if knob == "max_new_tokens" else float(gen_kwargs[key])
    return out


def run_context(
    knobs: Mapping[str, Any],
    gen_kwargs: Mapping[str, Any],
    regime: Mapping[str, Any] | None,
    *,
    task: str = "",
) -> Context:
    """The settings one task's documents run with (precedence in the module docstring);
    ValueError when the protocol refuses what `knobs` set."""
    from_task = {k: v for k, v in gen_knobs(gen_kwargs).items() if k not in knobs}
    asked = Context(**{**knobs, **from_task})
    given = set(knobs) | set(from_task)
    context, warnings = fit_context(asked, regime, given)
    conflicts = protocol_conflicts(context, knobs)  # a protocol the regime chose
    if conflicts:
        raise ValueError(f"paravt --model_args: {'; '.join(conflicts)}")
    refused = protocol_refusal(context, (), regime)  # a video_url for a frames-only server
    if refused:
        raise ValueError(refused)
    if warnings:
        log.warning("%s runs outside the served model's regime: %s", task, "; ".join(warnings))
    without_task, _ = fit_context(Context(**knobs), regime, set(knobs))
    cap = from_task.get("max_new_tokens")
    if cap is not None and cap < without_task.max_new_tokens:
        log.warning(
            "%s caps each generation at %d new tokens (its generation_kwargs): every "
            "main-agent turn, thinking and tool calls included, gets %d instead of %d. Name "
            "max_new_tokens in --model_args to give the agent its own budget.",
            task,
            cap,
            cap,
            without_task.max_new_tokens,
        )
    final = effective(context)
    for knob, value in from_task.items():
        if getattr(final, knob) != value:
            log.warning(
                "%s asks for %s=%s; %s fixes %s",
                task,
                knob,
                value,
                final.protocol,
                getattr(final, knob),
            )
    return final


def question_of(doc: DocInput, protocol: str, prompt_mode: str, kind: str | None) -> Question:
    """The question, options, kind and question block of a document under `protocol`."""
    text = doc.text if not doc.system else f"{doc.system}\n{doc.text}"
    asked = split_question(doc.text)
    kind = implied_kind(asked.options, kind)
    prompt = text
    build = RELEASE_DOCS.get(doc.task)
    if protocol == "release-eval" and build is not None:
        prompt = release_prompt(build.task, build.sample(doc), prompt_mode)
    return Question(asked.question, asked.options, kind, prompt)


def cut_at_stops(reply: str, until: Sequence[str] | str | None) -> str:
    """`reply` up to the first stop string in its answer: the text after the reasoning block
    (the whole reply when none closes), past the whitespace the answer starts with.

    >>> cut_at_stops("<think>a\\n\\nb</think>\\n\\n<answer>B</answer>\\n\\nSo...", ["\\n\\n"])
    '<think>a\\n\\nb</think>\\n\\n<answer>B</answer>'
    >>> cut_at_stops("B. Two\\n\\nWhy: ...", "\\n\\n"), cut_at_stops("B", None)
    ('B. Two', 'B')
    """
    stops = [until] if isinstance(until, str) else [s for s in until or () if s]
    head, mark, answer = reply.rpartition(REASONING_END)
    start = len(answer) - len(answer.lstrip())
    found = [answer.find(s, start) for s in stops if answer.find(s, start) >= 0]
    return head + mark + (answer[: min(found)] if found else answer)


@dataclass(frozen=True)
class ReleaseDocs:
    """How the release's question text is built from one lmms-eval task's documents."""

    task: str  # the benchmark's name in evals.release_prompts

    def sample(self, doc: DocInput) -> Sample:
        folder = Path(doc.media).parent
        return videomme.record_to_sample(dict(doc.doc), source=doc.task, media=_index(folder))


@functools.lru_cache(maxsize=64)
def _index(folder: Path) -> MediaIndex:
    return MediaIndex(folder, subdirs=())  # the row's own fields are all the text needs


#: lmms-eval tasks whose documents are rows the release's text is built from (Video-MME's
#: parquet, read as `evals.tasks.videomme` reads it).
RELEASE_DOCS = {"videomme": ReleaseDocs("videomme")}
