"""Run the ParaVT release's own RL rollout workflow on the parity episodes and record every
request it sends, as test data for the ``release-rl`` protocol.

    python tests/parity/record_release_rollouts.py --release /path/to/ParaVT@cf55249

Runs under the Python of tests/parity/record_release_requests.py (qwen-vl-utils, torch,
torchvision, torchcodec). ``paravt/rl/workflow.py``'s ``HierarchicalAgentWorkflow`` and its
crop_video sub-agent run unmodified; what they call out to is replaced: AReaL's API by small
stand-ins (a request records its fields; the engine answers from the episode's script), the
Qwen processor and tokenizer by a character-level one with Qwen's chat-template shape, and
``datasets`` so that the release's own parquet adapter (``paravt/rl/data/dataset.py``) reads
the fixture rows. For every generation the workflow asks for, the chat messages it holds
(``vision_msg_vllm``), its images (size, frame index, digest), the text appended after the
generation prompt (the Think Prefix), and the sampling settings are recorded. Writes
``tests/data/release_protocol/rl_requests.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import dataclasses
import importlib.util
import io
import json
import os
import subprocess
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.parity import release_episodes as E
from tests.parity import release_rl_episodes as RL
from tests.parity.record_release_requests import digest, write_videos

SPECIALS = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|image_pad|>", "<|vision_end|>"]
EOS = 1_000_001


class CharTokenizer:
    """One id per character, one per Qwen special token; Qwen's chat-template shape."""

    eos_token_id = EOS

    def encode(self, text, add_special_tokens=False):
        ids, i = [], 0
        while i < len(text):
            for k, special in enumerate(SPECIALS):
                if text.startswith(special, i):
                    ids.append(EOS if special == "<|im_end|>" else 1_000_000 + 10 + k)
                    i += len(special)
                    break
            else:
                ids.append(ord(text[i]))
                i += 1
        return ids

    def decode(self, ids, skip_special_tokens=False):
        out = []
        for i in list(ids):
            i = int(i)
            if i == EOS:
                out.append("" if skip_special_tokens else "<|im_end|>")
            elif i >= 1_000_000:
                out.append("" if skip_special_tokens else SPECIALS[i - 1_000_010])
            else:
                out.append(chr(i))
        return "".join(out)

    def convert_ids_to_tokens(self, i):
        return "<|im_end|>" if i == EOS else self.decode([i])

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True):
        text = ""
        for m in messages:
            body = m["content"]
            if isinstance(body, list):
                body = "".join(
                    p.get("text", "")
                    if p["type"] == "text"
                    else "<|vision_start|><|image_pad|><|vision_end|>"
                    for p in body
                )
            text += f"<|im_start|>{m['role']}\n{body}<|im_end|>\n"
        return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


class CharProcessor(CharTokenizer):
    def __call__(self, images=None, text="", padding=False, return_tensors="pt"):
        import torch

        ids = torch.tensor([self.encode(text)])
        count = len(images or [])
        return {
            "input_ids": ids,
            "pixel_values": torch.zeros((count, 1)),
            "image_grid_thw": torch.zeros((count, 3)),
        }


def stub_areal(recorder):
    def module(name, **attrs):
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
        return mod

    class Tracker:
        def scalar(self, **kwargs):
            pass

    class Wrapper:
        def __init__(self, fn):
            self.fn = fn

        async def __call__(self, **kwargs):
            return self.fn(**kwargs)

    @dataclasses.dataclass
    class ModelRequest:
        rid: str = ""
        input_ids: list = dataclasses.field(default_factory=list)
        image_data: list | None = None
        vision_msg_vllm: list | None = None
        gconfig: object = None
        tokenizer: object = None
        processor: object = None

    import logging

    module("areal")
    module("areal.api")
    module(
        "areal.api.cli_args",
        GRPOConfig=object,
        dataclass=dataclasses.dataclass,
        field=dataclasses.field,
    )
    module("areal.api.engine_api", InferenceEngine=object)
    module("areal.api.io_struct", ModelRequest=ModelRequest)
    module("areal.api.reward_api", AsyncRewardWrapper=Wrapper)
    module("areal.api.workflow_api", RolloutWorkflow=type("RolloutWorkflow", (), {}))
    module(
        "areal.utils",
        logging=logging,
        stats_tracker=types.SimpleNamespace(get=lambda name: Tracker()),
    )
    module("areal.utils.image", image2base64=recorder.image2base64)
    module("transformers", AutoProcessor=None)


class Recorder:
    def __init__(self):
        self.last_fetch = None
        self.images = {}

    def wrap_fetch(self, real):
        def fetch_video(ele, **kwargs):
            out = real(ele, **{**kwargs, "return_video_metadata": True})
            video_and_meta = out[0] if kwargs.get("return_video_sample_fps") else out
            video, meta = video_and_meta
            indices = meta["frames_indices"]
            indices = indices.tolist() if hasattr(indices, "tolist") else list(indices)
            self.last_fetch = {
                "video": os.path.basename(ele["video"]),
                "indices": indices,
                "fps": meta["fps"],
            }
            if kwargs.get("return_video_metadata"):
                return out
            return (video, out[1]) if kwargs.get("return_video_sample_fps") else video

        return fetch_video

    def image2base64(self, images):
        out = []
        fetch = self.last_fetch
        for position, image in enumerate(images):
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
            key = f"{fetch['video']}:{fetch['indices'][position]}:{image.width}x{image.height}"
            self.images.setdefault(
                key,
                {
                    "width": image.width,
                    "height": image.height,
                    "index": fetch["indices"][position],
                    "time": fetch["indices"][position] / fetch["fps"],
                    "digest": digest(buffer.getvalue()),
                },
            )
            out.append(key)
        return out


class ScriptedEngine:
    def __init__(self, tokenizer, replies):
        self.tokenizer, self.replies, self.requests = tokenizer, list(replies), []

    async def agenerate(self, req):
        messages = copy.deepcopy(req.vision_msg_vllm[0])
        keys = iter(req.image_data or [])
        for message in messages:
            for n, part in enumerate(message["content"]):
                if part["type"] == "image_url":
                    message["content"][n] = {"type": "image", "image": next(keys)}
        main = messages[0]["role"] == "system"
        prompt = self.tokenizer.decode(req.input_ids)
        header = "<|im_start|>assistant\n"
        record = {
            "role": "main" if main else "sub_agent",
            "messages": messages,
            "prefill": prompt[prompt.rfind(header) + len(header) :],
            "temperature": req.gconfig.temperature,
            "max_new_tokens": req.gconfig.max_new_tokens,
        }
        if main and len(self.requests) > 0:  # the token stream from the first turn on
            record["tokens_after_first_turn"] = prompt[prompt.find(header) :]
        self.requests.append(record)
        if main:
            reply = self.replies.pop(0)
            ids = self.tokenizer.encode(reply["text"]) + ([EOS] if reply["stopped"] else [])
        else:
            ids = [*self.tokenizer.encode(RL.SUB_REPLY), EOS]
        return types.SimpleNamespace(
            output_tokens=ids, output_logprobs=[0.0] * len(ids), output_versions=[0] * len(ids)
        )


def load(root: Path, recorder: Recorder):
    stub_areal(recorder)
    datasets = types.ModuleType("datasets")

    class Dataset:
        @staticmethod
        def from_parquet(path):
            return [RL.RL_ROWS[path]]

        @staticmethod
        def from_generator(gen):
            return list(gen())

    datasets.Dataset = Dataset
    sys.modules["datasets"] = datasets
    sys.path.insert(0, str(root))
    for name, path in (("paravt", "paravt/__init__.py"), ("paravt.rl", "paravt/rl/__init__.py")):
        spec = importlib.util.spec_from_file_location(name, root / path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    from paravt.rl import workflow
    from paravt.rl.data import dataset
    from paravt.rl.subagents.crop_video import cropped_video

    workflow.fetch_video = recorder.wrap_fetch(workflow.fetch_video)
    cropped_video.fetch_video = recorder.wrap_fetch(cropped_video.fetch_video)
    # The release's workflow reads each sub-agent's summary with
    # SubagentManager._extract_completion, which cf55249 does not define: every successful crop
    # raises AttributeError there. Supplied here as the only reading the name and the
    # trajectory allow: the decoded tokens the sub-agent generated (loss_mask 1).
    from paravt.rl.subagents.manager import SubagentManager

    def _extract_completion(self, trajectory):
        ids = trajectory["input_ids"][0][trajectory["loss_mask"][0] == 1]
        return self.tokenizer.decode(ids.tolist())

    SubagentManager._extract_completion = _extract_completion
    return workflow, dataset


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--release", type=Path, required=True, help="a ParaVT@cf55249 checkout")
    args = parser.parse_args()
    write_videos()
    recorder = Recorder()
    workflow, dataset = load(args.release, recorder)
    processor = CharProcessor()
    gconfig = types.SimpleNamespace(temperature=0.7, max_new_tokens=2048)
    gconfig.new = lambda **kwargs: gconfig
    config = workflow.HierarchicalAgentConfig(
        max_turns=3,
        enable_subagents="crop_video",
        subagents_kwargs={"crop_video": {"timeout": 120, "debug_mode": False}},
        nframes=64,
        fps=1,
        max_pixels=50176,
        min_pixels=784,
        max_frames=64,
    )
    out = []
    for episode in RL.rl_episodes():
        os.environ.update(RL.RL_RECIPES[episode["recipe"]])
        os.environ["NFRAMES_GATING"] = "1" if episode["recipe"] == "paragrpo" else "0"
        data = dataset.load_paravt_rl_dataset(episode["row"], str(E.VIDEOS_DIR))[0]
        engine = ScriptedEngine(processor, RL.rl_replies(episode))
        flow = workflow.HierarchicalAgentWorkflow(
            gconfig, processor, processor, lambda **kw: 0.0, config
        )
        result = asyncio.run(flow.arun_episode(engine, data))
        subs = result["subagent_trajectories"]
        ran = sum(1 for t in subs if t["input_ids"].numel() > 0)
        out.append({**episode, "requests": engine.requests, "sub_agents_ran": ran})
        print(f"{episode['id']}: {len(engine.requests)} requests", file=sys.stderr)
    head = subprocess.run(
        ["git", "-C", str(args.release), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    payload = {
        "source": "EvolvingLMMs-Lab/ParaVT",
        "commit": head,
        "files": [
            "paravt/rl/workflow.py",
            "paravt/rl/subagents/crop_video/cropped_video.py",
            "paravt/rl/utils/tool_parser.py",
            "paravt/rl/data/dataset.py",
            "paravt/rl/configs/_base.yaml",
        ],
        "patched": "SubagentManager._extract_completion (missing at cf55249): the decoded "
        "tokens the sub-agent generated",
        "episodes": out,
        "images": recorder.images,
    }
    path = E.DATA / "rl_requests.json"
    path.write_text(json.dumps(payload, separators=(",", ":")) + "\n")
    print(f"wrote {path}: {len(out)} episodes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
