"""The reliability suite's harness: needle data, an oracle behind the scripted server, real CLIs.

Shared by the reliability tests and their long versions in `bench/`. Everything here is real:
videos encoded on disk, HTTP to `testing.scripted` on 127.0.0.1, `app.py` as a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import av

from agents import prompts
from agents.media import video
from evals.sample import Sample
from evals.tasks import get_task
from testing.scripted import role_of

ROOT = Path(__file__).resolve().parents[2]
NEEDLE = get_task("needle")
SUB_AGENT_NOTE = "a coloured shape in the middle of the frame"


def needle_options(n_videos: int) -> dict[str, Any]:
    return {"n_videos": n_videos, "max_minutes": 1}


def needle_samples(data: Path, options: Mapping[str, Any]) -> list[Sample]:
    """Generate (or reuse) the needle videos under `data` and return their samples."""
    return NEEDLE.load(data, **options).samples


def first_image(messages: Sequence[Mapping[str, Any]]) -> str:
    return next(
        part["image_url"]["url"]
        for m in messages
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if part.get("type") == "image_url"
    )


def all_text(messages: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if p.get("type") == "text"]
    return "\n".join(parts)


def has_tool_results(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a main-agent request carries tool results (after the system and first turns,
    since the system prompt itself mentions <tool_response>)."""
    return "<tool_response>" in all_text(messages[2:])


def is_subagent(body: Mapping[str, Any]) -> bool:
    return role_of(body) == "sub_agent"


class Oracle:
    """A scripted-server responder that answers every needle sample correctly.

    A request is matched to its sample by its first overview frame (the same bytes the CLI
    encodes) and its question text; sub-agents get a fixed description. With
    `crop_first`, a main agent's first turn asks for two windows before it answers.
    """

    def __init__(self, samples: Sequence[Sample], *, crop_first: bool = False) -> None:
        self.crop_first = crop_first
        self.answers: dict[tuple[str, str], str] = {}
        context = NEEDLE.context
        for s in samples:
            info = video.probe(s.media)
            times = video.overview_timestamps(info.duration, context["overview_frames"])
            ref = prompts.frames_part(s.media, times, context["overview_max_pixels"])
            image = first_image(prompts.expand_frames([{"role": "user", "content": [ref]}]))
            if s.kind == "grounding":
                t = s.extra["target"]
                reply = f"The event happens in the {t['start']} - {t['end']} seconds"
            else:
                reply = s.target
            self.answers[(image, s.question)] = f"I know this.</think><answer>{reply}</answer>"

    def __call__(self, body: dict[str, Any]) -> str:
        if is_subagent(body):
            return SUB_AGENT_NOTE
        messages = body["messages"]
        if self.crop_first and not has_tool_results(messages):
            return (
                "Let me look.</think>"
                '<tool_call>{"name": "crop_video", "arguments": '
                '{"start_time": 1, "end_time": 10}}</tool_call>'
                '<tool_call>{"name": "crop_video", "arguments": '
                '{"start_time": 20, "end_time": 30}}</tool_call>'
            )
        image, text = first_image(messages), all_text(messages)
        key = next(k for k in self.answers if k[0] == image and k[1] in text)
        return self.answers[key]


def faststart(src: Path, dst: Path) -> Path:
    """Remux with the index (moov) before the frames, as streaming files are."""
    with (
        av.open(str(src)) as source,
        av.open(str(dst), "w", options={"movflags": "faststart"}) as out,
    ):
        stream = source.streams.video[0]
        copy = out.add_stream_from_template(stream)
        for packet in source.demux(stream):
            if packet.dts is not None:
                packet.stream = copy
                out.mux(packet)
    return dst


def app_command(*args: str, endpoint: str | None = None) -> list[str]:
    """`python app.py [--endpoint URL] ARGS...`, ignoring any `.env` of the working tree."""
    command = [sys.executable, str(ROOT / "app.py"), "--env-file", ""]
    if endpoint:
        command += ["--endpoint", endpoint]
    return command + list(args)


def eval_command(
    endpoint: str,
    data: Path,
    out: Path,
    options: Mapping[str, Any],
    *,
    concurrency: int = 2,
    extra: Sequence[str] = (),
) -> list[str]:
    """`app.py eval run` on the needle task with the benchmark's graph settings."""
    return app_command(
        "eval",
        "run",
        "--task",
        "needle",
        "--data-dir",
        str(data),
        "--out",
        str(out),
        "--concurrency",
        str(concurrency),
        *[f"--option={k}={v}" for k, v in options.items()],
        "--max-turns",
        "1",
        *extra,
        endpoint=endpoint,
    )


def app_env(home: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of an app.py child: no inherited PARAVT_* settings, one thread."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARAVT_")}
    env.update(OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    if home is not None:
        env["PARAVT_HOME"] = str(home)
    env.update(extra)
    return env


def run_folder(out: Path) -> Path:
    (folder,) = [p for p in out.glob("needle-*") if p.is_dir()]
    return folder


def log_lines(folder: Path) -> list[dict[str, Any]]:
    """Every parseable line of a run's samples.jsonl, in order."""
    path = folder / "samples.jsonl"
    if not path.exists():
        return []
    lines = []
    for raw in path.read_text().splitlines():
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:
            continue
    return lines


def accounting(folder: Path, samples: Sequence[Sample]) -> dict[str, Any]:
    """Lost, duplicated and unparseable lines of a finished run's log."""
    lines = log_lines(folder)
    ok = Counter(line["sample_id"] for line in lines if line["status"] == "ok")
    raw = (folder / "samples.jsonl").read_text().splitlines()
    return {
        "samples": len(samples),
        "lost": sum(1 for s in samples if ok[s.id] == 0),
        "duplicated": sum(n - 1 for n in ok.values() if n > 1),
        "unparseable_lines": len(raw) - len(lines),
        "error_lines": sum(1 for line in lines if line["status"] != "ok"),
    }


def results(folder: Path, profile: str = "official") -> dict[str, Any]:
    return json.loads((folder / f"results_{profile}.json").read_text())


def record_decodes(monkeypatch, events: list | None = None) -> list:
    """Record each video decode (in order, into `events`, as ("decode", path)) and let it
    run: every decoder `agents.media.video.decode_frames` dispatches to is wrapped."""
    events = [] if events is None else events
    for name in ("_decode_pyav", "_decode_keyframes", "_decode_decord"):
        decoder = getattr(video, name)

        def wrapped(info, *args, _decoder=decoder, **kwargs):
            events.append(("decode", info.path))
            return _decoder(info, *args, **kwargs)

        monkeypatch.setattr(video, name, wrapped)
    return events


def run_cli(command: Sequence[str], env: Mapping[str, str], timeout: float = 300):
    return subprocess.run(
        list(command), capture_output=True, text=True, timeout=timeout, env=dict(env), cwd=ROOT
    )


def crop_then_answer(body: dict[str, Any]) -> str:
    """A `--responder` for `app.py run`: two crop calls, then an answer after the results."""
    if is_subagent(body):
        return SUB_AGENT_NOTE
    if has_tool_results(body["messages"]):
        return "The shape is red.</think><answer>A</answer>"
    return (
        "Let me look.</think>"
        '<tool_call>{"name": "crop_video", "arguments": {"start_time": 1, "end_time": 10}}'
        "</tool_call>"
        '<tool_call>{"name": "crop_video", "arguments": {"start_time": 20, "end_time": 30}}'
        "</tool_call>"
    )
