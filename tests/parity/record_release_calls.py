"""Run the ParaVT release's two tool-call readers and its time reader on a corpus of turns, as
test data for `agents.protocols.release_calls`.

    python tests/parity/record_release_calls.py --release /path/to/ParaVT@cf55249

The readers are ``paravt/eval/driver.py`` ``parse_tool_calls``, ``paravt/rl/utils/
tool_parser.py`` ``Hermes2ProToolParser.extract_tool_calls`` and ``paravt/eval/utils.py``
``parse_time_val``; they import nothing heavy but ``paravt.eval.utils``'s module-level imports,
which are replaced by empty modules. Writes ``tests/data/parity/release_calls.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import subprocess
import sys
import types
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "data" / "parity" / "release_calls.json"


def corpus() -> list[str]:
    """Turns with every shape a reader can meet: closed, unclosed, nested, fenced, bad JSON,
    non-object JSON, string arguments, tool_code leaks (keyword, positional, print-wrapped,
    stray quotes, several lines), calls inside the think block, trailing <|im_end|>."""
    call = '{"name": "crop_video", "arguments": {"start_time": 3, "end_time": 9}}'
    other = '{"name": "zoom", "arguments": {"start": "1:05", "end": "1:20"}}'
    pieces = [
        f"<tool_call>\n{call}\n</tool_call>",
        f"<tool_call>{other}</tool_call>",
        f"<tool_call>\n{call}",  # unclosed, complete JSON
        '<tool_call>\n{"name": "crop_video", "arguments": {"start_time": 3,',  # cut
        "<tool_call>\n[1, 2]\n</tool_call>",
        "<tool_call></tool_call>",
        "<tool_call>\nnot json\n</tool_call>",
        '<tool_call>\n{"name": "crop_video", "arguments": "{\\"start_time\\": 1}"}\n</tool_call>',
        '<tool_call>{"arguments": {"start_time": 1, "end_time": 2}}</tool_call>',
        "<tool_code>crop_video(start_time=1, end_time=4)</tool_code>",
        '<tool_code>crop_video(video_path="a.mp4", start_time="0:10", end_time=20)</tool_code>',
        '<tool_code>crop_video("a.mp4", 5, 15)</tool_code>',
        "<tool_code>print(crop_video(start_time=2, end_time=6))</tool_code>",
        "<tool_code>crop_video(start_time=2, end_time=6')</tool_code>",
        "<tool_code>crop_video(start_time=1, end_time=2)\ncrop_video(start_time=5, end_time=8)",
        "<tool_code></tool_code>",
        "<tool_code><|im_end|></tool_code>",
        "<tool_code>zoom(start=1)</tool_code>",
        "<think>\nmaybe " + f"<tool_call>{call}</tool_call>" + " first\n</think>\n",
        "<answer>B</answer>",
        "<|im_end|>",
        "\n",
    ]
    texts = list(pieces)
    for a, b in itertools.combinations(pieces, 2):
        texts.append(a + "\n" + b)
    return texts


def time_values() -> list:
    return [
        0,
        12,
        12.5,
        -3,
        True,
        "7",
        " 8.5 ",
        "1:05",
        "01:00:05",
        "1:5:7:9",
        "a:b",
        "soon",
        "",
        None,
        [1],
        {"s": 1},
        "inf",
        "nan",
        "1e3",
        "12s",
    ]


def load(root: Path, name: str, rel: str):
    spec = importlib.util.spec_from_file_location(name, root / rel)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--release", type=Path, required=True)
    args = parser.parse_args()
    for name in ("openai", "PIL", "PIL.Image", "qwen_vl_utils", "qwen_vl_utils.vision_process"):
        module = types.ModuleType(name)
        module.OpenAI = module.Image = module.fetch_video = object
        sys.modules.setdefault(name, module)
    for name, rel in (("paravt", "paravt/__init__.py"), ("paravt.eval", "paravt/eval/__init__.py")):
        load(args.release, name, rel)
    utils = load(args.release, "paravt.eval.utils", "paravt/eval/utils.py")
    driver = load(args.release, "paravt.eval.driver", "paravt/eval/driver.py")
    tool_parser = load(args.release, "tool_parser", "paravt/rl/utils/tool_parser.py")
    hermes = tool_parser.Hermes2ProToolParser()
    items = []
    for text in corpus():
        rl = hermes.extract_tool_calls(text)
        items.append(
            {
                "text": text,
                "eval": driver.parse_tool_calls(text),
                "rl": [[c.function.name, c.function.arguments] for c in rl.tool_calls]
                if rl.tools_called
                else None,
            }
        )
    times = [[repr(v), utils.parse_time_val(v)] for v in time_values()]
    head = subprocess.run(
        ["git", "-C", str(args.release), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    data = {
        "source": "EvolvingLMMs-Lab/ParaVT",
        "commit": head,
        "files": [
            "paravt/eval/driver.py",
            "paravt/rl/utils/tool_parser.py",
            "paravt/eval/utils.py",
        ],
        "items": items,
        "times": times,
    }
    OUT.write_text(json.dumps(data, indent=None) + "\n")
    print(f"wrote {OUT}: {len(items)} turns", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
