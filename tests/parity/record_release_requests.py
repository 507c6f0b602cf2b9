"""Run the ParaVT release's own evaluation driver on the parity episodes and record every
request it sends, as test data for the ``release-eval`` protocol.

    python tests/parity/record_release_requests.py --release /path/to/ParaVT@cf55249

Runs under a Python where the release's imports load for real: qwen-vl-utils 0.0.14 with torch,
torchvision and torchcodec, PIL, numpy, openai, PyAV (tests/parity/README.md). Only
``datasets.load_dataset`` is replaced: it returns the fixture rows of
`tests/parity/release_episodes.py` in each benchmark's published schema. The fixture videos
are written once into ``tests/data/release_protocol/videos`` (kept, so that this project's test
reads the very same files). For every episode ``utils.load_samples`` builds the sample and
``driver.eval_one`` runs it against a scripted client that records each request; images are
stored as their size, the frame index and rate qwen-vl-utils took them at, and an 8x8 RGB
digest of the JPEG. Writes ``tests/data/release_protocol/eval_requests.json``.
"""

from __future__ import annotations

import argparse
import base64
import copy
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import types
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.parity import release_episodes as E

HF_NAMES = {  # the release's dataset ids -> fixture datasets
    "lmms-lab/Video-MME": "videomme",
    "longvideobench/LongVideoBench": "longvideobench",
    "lmms-lab/LVBench": "lvbench",
    "sy1998/MLVU_dev": "mlvu",
    "yale-nlp/MMVU": "mmvu",
    "lmms-lab/charades_sta": "charades",
}


def write_videos() -> None:
    import av

    E.VIDEOS_DIR.mkdir(parents=True, exist_ok=True)
    for name, (width, height, seconds, rate) in E.VIDEOS.items():
        path = E.VIDEOS_DIR / f"{name}.mp4"
        if path.exists():
            continue
        fps = Fraction(rate)
        with av.open(str(path), "w") as container:
            stream = container.add_stream("libx264", rate=fps)
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            stream.options = {"preset": "veryfast", "crf": "30", "g": "25"}
            count = round(float(fps) * seconds)
            for i in range(count):
                frame = np.full((height, width, 3), 40, np.uint8)
                frame[: height // 3, :, 2] = 200  # a blue band
                x = int((width - width // 5) * i / max(count - 1, 1))
                colour = (220, 30, 30) if i < count // 2 else (30, 30, 220)
                frame[height // 3 : height // 3 * 2, x : x + width // 5] = colour
                out = av.VideoFrame.from_ndarray(frame, format="rgb24")
                for packet in stream.encode(out):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)


def load_release(root: Path):
    """The release's eval package with ``datasets`` replaced by the fixture rows."""
    datasets = types.ModuleType("datasets")

    def load_dataset(name, *args, **kwargs):
        dataset = HF_NAMES[name]
        items = E.RELEASE_DATASETS[dataset]
        return [copy.deepcopy(E.ITEMS[i]["row"]) for i in items]

    datasets.load_dataset = load_dataset
    sys.modules["datasets"] = datasets
    sys.path.insert(0, str(root))
    for name, path in (
        ("paravt", "paravt/__init__.py"),
        ("paravt.eval", "paravt/eval/__init__.py"),
    ):
        spec = importlib.util.spec_from_file_location(name, root / path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    from paravt.eval import driver, utils

    return driver, utils


def digest(jpeg: bytes) -> list[int]:
    from PIL import Image

    image = Image.open(io.BytesIO(jpeg)).convert("RGB")
    return list(np.asarray(image.resize((8, 8), Image.Resampling.BOX)).reshape(-1).tolist())


class Recorder:
    """Tags every frame qwen-vl-utils returns with its index and rate, and every data URL
    the driver makes with the frame it came from."""

    def __init__(self, utils):
        self.utils, self.urls, self.fetches, self.images = utils, {}, [], {}
        real_fetch, real_b64 = utils.fetch_video, utils.pil_to_b64
        real_frames, real_crop = utils.get_frames, utils.crop_frames

        def fetch_video(ele, **kwargs):
            try:
                video, meta = real_fetch(ele, return_video_metadata=True)
            except Exception as exc:
                self.fetches.append({"request": _plain(ele), "error": type(exc).__name__})
                raise
            indices = meta["frames_indices"]
            indices = indices.tolist() if hasattr(indices, "tolist") else list(indices)
            self.fetches.append({"request": _plain(ele), "indices": indices, "fps": meta["fps"]})
            return video

        def tagged(real):
            def run(*args, **kwargs):
                before = len(self.fetches)
                images = real(*args, **kwargs)
                fetch = self.fetches[-1] if len(self.fetches) > before else None
                for position, image in enumerate(images):
                    image.info["paravt"] = {
                        "video": fetch["request"]["video"],
                        "index": fetch["indices"][position],
                        "fps": fetch["fps"],
                    }
                return images

            return run

        def pil_to_b64(image):
            url = real_b64(image)
            jpeg = base64.b64decode(url.split(",", 1)[1])
            tag = image.info["paravt"]
            key = f"{tag['video']}:{tag['index']}:{image.width}x{image.height}"
            self.urls[url] = key
            self.images.setdefault(
                key,
                {
                    "width": image.width,
                    "height": image.height,
                    "index": tag["index"],
                    "time": tag["index"] / tag["fps"],
                    "digest": digest(jpeg),
                },
            )
            return url

        utils.fetch_video = fetch_video
        utils.get_frames = tagged(real_frames)
        utils.crop_frames = tagged(real_crop)
        utils.pil_to_b64 = pil_to_b64

    def message(self, message: dict) -> dict:
        content = message["content"]
        if isinstance(content, str):
            return {"role": message["role"], "content": content}
        parts = []
        for part in content:
            if part["type"] == "image_url":
                parts.append({"type": "image", "image": self.urls[part["image_url"]["url"]]})
            elif part["type"] == "video_url":
                url = part["video_url"]["url"]
                parts.append({"type": "video_url", "file": os.path.basename(url)})
            else:
                parts.append(dict(part))
        return {"role": message["role"], "content": parts}


def _plain(ele: dict) -> dict:
    return {k: (os.path.basename(v) if k == "video" else v) for k, v in ele.items()}


class ScriptedClient:
    """The OpenAI client ``eval_one`` calls, answering from a script and recording requests."""

    def __init__(self, replies: list[str], recorder: Recorder):
        self.replies, self.recorder, self.requests = list(replies), recorder, []
        self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=self.create))

    def create(self, *, model, messages, max_tokens, temperature):
        self.requests.append(
            {
                "messages": [self.recorder.message(m) for m in messages],
                "max_tokens": max_tokens,
                "temperature": temperature,
            }
        )
        text = self.replies.pop(0) if self.replies else ""
        message = types.SimpleNamespace(content=text)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--release", type=Path, required=True, help="a ParaVT@cf55249 checkout")
    args = parser.parse_args()
    write_videos()
    driver, utils = load_release(args.release)
    recorder = Recorder(utils)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        hf_home = Path(tmp)
        os.environ.update(E.release_layout(hf_home))
        samples: dict[tuple[str, str], list] = {}
        for episode in E.episodes():
            key = (episode["dataset"], episode["mode"])
            if key not in samples:
                samples[key] = utils.load_samples(episode["dataset"], str(hf_home), episode["mode"])
            rows = E.RELEASE_DATASETS[episode["dataset"]]
            sample = samples[key][rows.index(episode["item"])]
            replies = E.script(episode["script"], episode["item"])
            client = ScriptedClient(replies, recorder)
            before = len(recorder.fetches)
            max_turns = 3 if driver._is_agentic(episode["mode"]) else 1
            result = driver.eval_one(
                client,
                "m",
                sample,
                nframes=64,
                max_turns=max_turns,
                prompt_mode=episode["mode"],
                max_parallel=5,
                max_tokens=2048,
                video_channel=episode["channel"],
            )
            out.append(
                {
                    **episode,
                    "question": sample["question"],
                    "requests": client.requests,
                    "replies_used": len(replies) - len(client.replies),
                    "fetches": recorder.fetches[before:],
                    "result": {k: v for k, v in result.items() if k != "full_response"},
                }
            )
            print(f"{episode['id']}: {len(client.requests)} requests", file=sys.stderr)
    head = subprocess.run(
        ["git", "-C", str(args.release), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    import qwen_vl_utils
    import torch

    data = {
        "source": "EvolvingLMMs-Lab/ParaVT",
        "commit": head,
        "files": ["paravt/eval/driver.py", "paravt/eval/utils.py"],
        "versions": {
            "qwen_vl_utils": getattr(qwen_vl_utils, "__version__", "0.0.14"),
            "torch": torch.__version__,
            "video_reader": utils.fetch_video.__module__,
            "backend": os.environ.get("FORCE_QWENVL_VIDEO_READER", "auto"),
        },
        "episodes": out,
        "images": recorder.images,
    }
    path = E.DATA / "eval_requests.json"
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"wrote {path}: {len(out)} episodes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
