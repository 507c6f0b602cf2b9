"""Graph traces (and ParaVT parquet rows) -> SFT rows in TRL's conversational format.

A row is what the model saw and wrote, rendered exactly as the graph renders it at request
time (``agents.prompts.expand_frames``: a ``<t seconds>`` text before each JPEG frame)::

    {"messages": [{"role": "system" | "user" | "assistant",
                   "content": [{"type": "text", "text": "..."} | {"type": "image"}, ...]}],
     "images": [{"bytes": <JPEG>, "path": None}, ...],  # one per image part, in order
     "source": "trace" | "paravt", "run_id": "...", "agent": "main" | "sub:<turn>:<index>",
     "role": "main" | "sub_agent" | "verifier"}  # agents.requests.Role: who wrote the reply

Decisions, and why:

- Images are the JPEG bytes the server would have received in the data URL, as
  ``{"bytes", "path"}`` dicts (the storage form of ``datasets.Image``), never re-encoded PIL
  images: ``datasets`` re-compresses a JPEG-sourced PIL image, which would change the pixels.
  ``training.collate`` decodes them as the server does (``Image.open(...).convert("RGB")``).
- Content is always a list of parts (a plain string becomes one text part), so Arrow can
  store the column; the chat template renders both forms to the same text.
- One main-agent row per conversation: each turn's prompt is the previous prompt plus the
  previous reply, so the last call's messages plus its reply hold every turn, and every
  assistant turn carries loss. A call whose messages do not extend the previous conversation
  starts a new row.
- The assistant turn is the prefill plus the generated text (``"<think>\\n..."``), as the
  graph stores it: the prefilled ``<think>\\n`` carries loss, since it is the model's turn
  (the recipe's "score the response including its prefilled prefix", applied to SFT).
- Sub-agent summaries are rows of their own (``subagents=True``), never mixed into the main
  agent's loss.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agents import prompts
from agents.main_turn import Setting
from agents.media import video
from agents.protocol import render_turn
from agents.protocols import get_protocol
from agents.question import Question
from graphs.context import Context, effective
from graphs.runs.traces import call_role, read_jsonl
from training.questions import RLPrompt, normalise_target

log = logging.getLogger(__name__)

#: ParaVT's ``extra_info.question_type`` -> this project's question kinds.
PARAVT_KINDS = {"mcq": "multiple_choice", "tvg": "grounding", "oe": "open_ended"}
#: The think text of an answer-only row made from a ParaVT record without a response.
ANSWER_ONLY_THINK = "The overview frames show enough to answer."
_DATA_URL_PREFIX = "base64,"


def chat_row(messages: Sequence[Mapping[str, Any]], **meta: Any) -> dict[str, Any]:
    """OpenAI messages with frame references -> one row: template parts + JPEG images."""
    rendered, images = [], []
    for message in prompts.expand_frames(messages):
        content = message.get("content")
        parts = [prompts.text_part(content)] if isinstance(content, str) else content or []
        out_parts = []
        for part in parts:
            if part["type"] == "image_url":
                url = part["image_url"]["url"]
                jpeg = base64.b64decode(url[url.index(_DATA_URL_PREFIX) + len(_DATA_URL_PREFIX) :])
                images.append({"bytes": jpeg, "path": None})
                out_parts.append({"type": "image"})
            elif part["type"] == "text":
                out_parts.append(prompts.text_part(part["text"]))
            else:
                raise ValueError(f"cannot train on a {part['type']!r} content part")
        rendered.append({"role": message["role"], "content": out_parts})
    return {"messages": rendered, "images": images, **meta}


def main_conversations(trace: Mapping[str, Any]) -> list[list[dict[str, Any]]]:
    """The main agent's conversations (frame references kept), each ending with its reply."""
    conversations: list[list[dict[str, Any]]] = []
    for call in trace["model_calls"]:
        if call_role(call) != "main":
            continue
        reply = {
            "role": "assistant",
            "content": (call["prefill"] or "") + call["completion"]["text"],
        }
        messages = list(call["messages"])
        last = conversations[-1] if conversations else None
        if last is not None and messages[: len(last)] == last:
            conversations[-1] = [*messages, reply]
        else:
            conversations.append([*messages, reply])
    return conversations


def trace_rows(trace: Mapping[str, Any], *, subagents: bool = False) -> Iterator[dict[str, Any]]:
    """Rows of one trace: the main agent's conversations, then (optionally) sub-agent calls."""
    meta = {"source": "trace", "run_id": trace["run_id"]}
    for conversation in main_conversations(trace):
        yield chat_row(conversation, **meta, agent="main", role="main")
    if not subagents:
        return
    for call in trace["model_calls"]:
        if call_role(call) == "sub_agent":
            reply = {"role": "assistant", "content": call["completion"]["text"]}
            yield chat_row(
                [*call["messages"], reply], **meta, agent=call["agent"], role="sub_agent"
            )


def traces_to_rows(
    traces: Iterable[Mapping[str, Any]],
    *,
    subagents: bool = False,
    statuses: Sequence[str] | None = ("answered",),
) -> Iterator[dict[str, Any]]:
    """Rows of many traces; only traces whose status is in ``statuses`` (None: all)."""
    kept = skipped = 0
    for trace in traces:
        if statuses is not None and trace["status"] not in statuses:
            skipped += 1
            continue
        kept += 1
        yield from trace_rows(trace, subagents=subagents)
    log.info("made SFT rows from %d traces (%d skipped by status)", kept, skipped)


def paravt_record(row: Mapping[str, Any], video_root: str | Path | None = None) -> dict[str, Any]:
    """A ParaVT parquet row (``prompt``, ``videos``, ``extra_info``) -> a plain record.

    The record has ``video`` (resolved path), ``prompt`` (the user text without the
    ``<video>`` placeholder), ``kind``, ``answer`` and ``response`` (the assistant text, when
    the prompt list carries one). A missing video raises ``agents.media.video.VideoError``.
    """
    info = row.get("extra_info") or {}
    info = json.loads(info) if isinstance(info, str) else dict(info)
    path = str(row["videos"][0]["video"]).removeprefix("file://")
    if video_root is not None and not Path(path).is_absolute():
        path = str(Path(video_root) / path)
    video.probe(path)  # a missing or unreadable video is the user's to fix, loudly
    texts: dict[str, list[str]] = {"user": [], "assistant": [], "system": []}
    raw_user = []
    for message in row["prompt"]:
        if message["role"] in texts:
            text = str(message["content"])
            texts[message["role"]].append(text.replace("<video>", "").strip())
            if message["role"] == "user":
                raw_user.append(text.replace("<video>", ""))
    question_type = str(info.get("question_type", "oe"))
    if question_type not in PARAVT_KINDS:
        raise ValueError(
            f"unknown ParaVT question_type {question_type!r}; use one of {PARAVT_KINDS}"
        )
    system = [str(m["content"]) for m in row["prompt"] if m["role"] == "system"]
    return {
        "video": path,
        "prompt": "\n".join(texts["user"]),
        "kind": PARAVT_KINDS[question_type],
        "answer": str(info.get("answer", "")),
        "response": texts["assistant"][-1] if texts["assistant"] else None,
        # as the release's RL workflow sends them (release-rl): the row's own system prompt,
        # and the user text with only the <video> placeholder taken out
        "system": system[0] if system else None,
        "user_text": raw_user[-1] if raw_user else "",
    }


def paravt_messages(record: Mapping[str, Any], context: Context | None = None) -> list[dict]:
    """The graph's first main-agent request for a record: the same builder the graph uses
    (``agents.main_turn``, or the run's protocol), with the same sampling rules."""
    ctx = effective(context or Context())
    info = video.probe(record["video"])
    protocol = get_protocol(ctx.protocol)
    if ctx.protocol == "release-rl":  # the release's own prompts: the row's, as written
        ask = Question(
            question="", kind=record["kind"], prompt=record["user_text"], system=record["system"]
        )
    else:
        ask = Question(question="", kind=record["kind"], prompt=record["prompt"])
    request = protocol.main_request(
        ask,
        protocol.overview(info, ctx),
        duration=info.duration,
        setting=Setting.of(ctx, info.codec),
        steps=(),
        turn=0,
        ctx=ctx,
    )
    return request.messages


def paravt_rows(
    rows: Iterable[Mapping[str, Any]],
    *,
    video_root: str | Path | None = None,
    context: Context | None = None,
    think: str = ANSWER_ONLY_THINK,
) -> Iterator[dict[str, Any]]:
    """SFT rows from ParaVT parquet rows: the graph's first turn, then the target turn.

    The target is the row's own assistant message when it has one, else an answer-only turn
    (``<think>\\n{think}\\n</think>\\n\\n<answer>{answer}</answer>``): such rows teach the
    output format and the answer, not tool use. The row's own system prompt is replaced by
    the graph's, since that is what the model sees at inference.
    """
    for index, row in enumerate(rows):
        record = paravt_record(row, video_root)
        reply = record["response"] or render_turn(think, answer=record["answer"])
        messages = [*paravt_messages(record, context), {"role": "assistant", "content": reply}]
        yield chat_row(
            messages, source="paravt", run_id=f"paravt-{index}", agent="main", role="main"
        )


def read_paravt_parquet(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a ParaVT parquet file as dicts (needs the ``evals`` extra's pyarrow)."""
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def to_dataset(rows: Iterable[Mapping[str, Any]]):
    """A ``datasets.Dataset`` of rows, images typed as ``datasets.Image`` (stored, not decoded)."""
    from datasets import Dataset, Features, Image, List, Value

    part = {"type": Value("string"), "text": Value("string")}
    features = Features(
        {
            "messages": List({"role": Value("string"), "content": List(part)}),
            "images": List(Image(decode=False)),
            "source": Value("string"),
            "run_id": Value("string"),
            "agent": Value("string"),
            "role": Value("string"),
        }
    )
    return Dataset.from_list([dict(row) for row in rows], features=features)


def main(argv: list[str] | None = None) -> None:
    """CLI: ``python -m training.sft_data --traces runs.jsonl --out rows/`` (a saved Dataset)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", nargs="*", default=[], help="Trace JSONL files.")
    parser.add_argument("--paravt-parquet", nargs="*", default=[], help="ParaVT parquet files.")
    parser.add_argument("--video-root", help="Root of relative ParaVT video paths.")
    parser.add_argument("--subagents", action="store_true", help="Also export sub-agent rows.")
    parser.add_argument("--out", required=True, type=Path, help="Dataset directory to write.")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    traces = (trace for path in args.traces for trace in read_jsonl(path))
    rows = list(traces_to_rows(traces, subagents=args.subagents))
    for path in args.paravt_parquet:
        rows += paravt_rows(read_paravt_parquet(path), video_root=args.video_root)
    to_dataset(rows).save_to_disk(str(args.out))
    log.info("wrote %d rows to %s", len(rows), args.out)


if __name__ == "__main__":
    main()


def paravt_prompts(
    rows: Iterable[Mapping[str, Any]], *, video_root: str | Path | None = None
) -> list[RLPrompt]:
    """Rollout questions from ParaVT RL parquet rows, carrying what ``--protocol release-rl``
    sends: the row's system prompt and its user text (``<video>`` taken out)."""
    prompts_out = []
    for index, row in enumerate(rows):
        record = paravt_record(row, video_root)
        target = normalise_target(_release_target(record))
        prompts_out.append(
            RLPrompt(
                id=f"paravt-{index}",
                video=record["video"],
                question=record["prompt"],
                options=(),
                kind=record["kind"],
                target=target,
                prompt=record["user_text"],
                system=record["system"],
            )
        )
    return prompts_out


def _release_target(record: Mapping[str, Any]) -> Any:
    """The release writes a grounding answer as "[start, end]"."""
    if record["kind"] == "grounding":
        return json.loads(record["answer"])
    return record["answer"]
