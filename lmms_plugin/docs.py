"""What each lmms-eval request asks: its task and doc id, the task's prompt text, the video or
images, and the task's generation settings.

A chat model gets ``(context, doc_to_messages, gen_kwargs, doc_id, task, split)``: the media
and text come from the task's messages (lmms-eval builds them from ``doc_to_visual`` and
``doc_to_text`` when a task has none of its own). A simple model, and a Python task whose
requests were never given messages, gets ``(context, gen_kwargs, doc_to_visual, doc_id,
task, split)``: then the visuals come from ``doc_to_visual`` and the text is the context.

What the graph cannot take is refused for the whole task before any request runs: a
document with no video or image, audio, several videos, a clip of a video, or a
conversation with earlier assistant turns. Images given as pixels (PIL) are written once,
by content, as PNG under ``media_dir``; several images become a deck folder (one page each).
"""

from __future__ import annotations

import hashlib
import io
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.media.stills import IMAGE_EXTENSIONS

AUDIO_EXTENSIONS = (".wav", ".mp3", ".m4a", ".aac", ".flac", ".ogg", ".opus")


class TaskRefused(ValueError):
    """A task whose documents the graph cannot answer; the message names the task and why."""


@dataclass(frozen=True)
class DocInput:
    """One document as the graph will be asked about it."""

    task: str
    split: str
    doc_id: int
    repeat: int  # which copy of the document (lmms-eval's `repeats`), from 0
    text: str  # the task's prompt: its user text, in order
    media: str  # a video, an image, or a folder of page images
    gen_kwargs: dict[str, Any] = field(default_factory=dict)
    system: str | None = None  # the text of a system message the task sends
    doc: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def source(self) -> dict[str, Any]:
        """Where the question came from, as the board and the trace keep it."""
        return {
            "harness": "lmms-eval",
            "task": self.task,
            "split": self.split,
            "doc_id": self.doc_id,
            "repeat": self.repeat,
        }


def read_requests(
    requests: Sequence[Any], task_dict: Mapping[str, Any], media_dir: Path
) -> list[DocInput]:
    """Every request as a DocInput, in order; TaskRefused (naming the task and the first
    offending document) before anything runs when one cannot be answered."""
    seen: Counter = Counter()
    docs = []
    for request in requests:
        doc = read_request(request, task_dict, media_dir)
        key = (doc.task, doc.split, doc.doc_id)
        docs.append(DocInput(**{**doc.__dict__, "repeat": seen[key]}))
        seen[key] += 1
    return docs


def read_request(request: Any, task_dict: Mapping[str, Any], media_dir: Path) -> DocInput:
    """One lmms-eval Instance (chat or simple arguments) as a DocInput."""
    args = tuple(request.args)
    if len(args) == 6 and callable(args[1]):  # chat: messages
        context, doc_to_messages, gen_kwargs, doc_id, task, split = args
        doc = task_dict[task][split][doc_id]
        visuals, text, system = _from_messages(doc_to_messages(doc), task, doc_id)
    elif len(args) == 6 and isinstance(args[1], dict):  # simple: doc_to_visual + context
        context, gen_kwargs, doc_to_visual, doc_id, task, split = args
        doc = task_dict[task][split][doc_id]
        visuals = list(doc_to_visual(doc) or []) if callable(doc_to_visual) else []
        text, system = str(context), None
    else:
        raise TaskRefused(
            f"paravt cannot read the requests of {getattr(request, 'task_name', '?')}: "
            f"arguments of {request.request_type} with {len(args)} fields are neither chat "
            "messages nor lmms-eval's simple (context, gen_kwargs, doc_to_visual, ...) form"
        )
    media = _media(visuals, task, doc_id, media_dir)
    return DocInput(
        task, split, int(doc_id), 0, text, media, dict(gen_kwargs or {}), system, _plain(doc)
    )


def _from_messages(messages: Any, task: str, doc_id: Any) -> tuple[list, str, str | None]:
    """The visuals, the user text and the system text of a task's chat messages."""
    if not isinstance(messages, list):
        raise TaskRefused(
            f"{task} has no messages for doc {doc_id} (doc_to_messages gave "
            f"{type(messages).__name__}): paravt needs its video or images and its prompt"
        )
    visuals, texts, system = [], [], []
    for message in messages:
        role, content = message.get("role"), message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if role == "assistant":
            raise TaskRefused(
                f"{task} sends a conversation with assistant turns (doc {doc_id}): paravt "
                "answers one question per document, so few-shot or multi-turn chats cannot "
                "be carried; run it with num_fewshot 0"
            )
        for part in parts or []:
            kind = part.get("type")
            if kind == "text":
                (system if role == "system" else texts).append(str(part.get("text", "")))
            elif kind in ("image", "video", "audio"):
                visuals.append((kind, part.get("url")))
            else:
                raise TaskRefused(
                    f"{task} sends a {kind!r} part (doc {doc_id}): paravt reads "
                    "text, video and images"
                )
    return visuals, "\n".join(texts), "\n".join(system) or None


def _media(visuals: list, task: str, doc_id: Any, media_dir: Path) -> str:
    """The one video, the image or the deck of a document's visuals."""
    videos, images = [], []
    for visual in visuals:
        kind, value = visual if isinstance(visual, tuple) else (_kind_of(visual), visual)
        if kind == "audio" or (kind == "video" and _is_audio(value)):
            raise TaskRefused(f"{task} sends audio (doc {doc_id}): paravt reads video and images")
        if isinstance(value, dict) and ("video_start" in value or "video_end" in value):
            raise TaskRefused(
                f"{task} asks about a clip of its video (video_start/video_end, doc {doc_id}): "
                "paravt runs the graph over whole videos"
            )
        if isinstance(value, dict):
            value = value.get("url") or value.get("path") or value.get("video")
        (videos if kind == "video" else images).append(value)
    if not videos and not images:
        raise TaskRefused(
            f"{task} has no video or image in doc {doc_id}: paravt answers questions about "
            "videos and images, and this task's documents carry neither"
        )
    if len(videos) > 1 or (videos and images):
        raise TaskRefused(
            f"{task} sends {len(videos)} videos and {len(images)} images in doc {doc_id}: "
            "paravt answers about one video (or images) per document"
        )
    if videos:
        return os.path.abspath(str(videos[0]))
    paths = [_image_path(image, media_dir) for image in images]
    return paths[0] if len(paths) == 1 else _deck(paths, media_dir)


def _plain(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The document's text and number fields (its images stay with lmms-eval)."""

    def plain(value: Any) -> bool:
        if isinstance(value, (list, tuple)):
            return all(plain(v) for v in value)
        if isinstance(value, dict):
            return all(plain(v) for v in value.values())
        return value is None or isinstance(value, (str, int, float, bool))

    return {k: v for k, v in dict(doc).items() if plain(v)}


def _kind_of(visual: Any) -> str:
    """lmms-eval's own reading of a simple visual: a path by its extension, pixels an image."""
    if isinstance(visual, str):
        suffix = Path(visual).suffix.lower()
        if suffix in IMAGE_EXTENSIONS or suffix in (".gif", ".tif", ".tiff"):
            return "image"
        return "audio" if suffix in AUDIO_EXTENSIONS else "video"
    if isinstance(visual, dict):
        return str(visual.get("type", "video"))
    return "image"


def _is_audio(value: Any) -> bool:
    return isinstance(value, str) and Path(value).suffix.lower() in AUDIO_EXTENSIONS


def _image_path(image: Any, media_dir: Path) -> str:
    """A path to the image: its own path, or a PNG of its pixels named by their hash."""
    if isinstance(image, (str, os.PathLike)):
        return os.path.abspath(str(image))
    if not hasattr(image, "convert"):
        raise TaskRefused(f"an image of type {type(image).__name__} cannot be read")
    rgb = image.convert("RGB")
    digest = hashlib.sha256(f"{rgb.size}".encode() + rgb.tobytes()).hexdigest()[:24]
    path = media_dir / f"{digest}.png"
    if not path.exists():  # written once: the same pixels are the same file on every run
        media_dir.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        rgb.save(buffer, format="PNG")
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(buffer.getvalue())
        os.replace(tmp, path)
    return str(path)


def _deck(pages: list[str], media_dir: Path) -> str:
    """A folder of links to the pages, in order: the graph's deck (one page per second)."""
    name = hashlib.sha256("\n".join(pages).encode()).hexdigest()[:24]
    folder = media_dir / f"deck-{name}"
    if not folder.is_dir():
        tmp = media_dir / f".deck-{name}.{os.getpid()}"
        tmp.mkdir(parents=True, exist_ok=True)
        for number, page in enumerate(pages, 1):
            (tmp / f"page_{number:03d}{Path(page).suffix.lower()}").symlink_to(page)
        os.replace(tmp, folder)
    return str(folder)
