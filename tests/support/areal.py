"""What the AReaL workflow tests share: the crop calls a fake engine writes first, and the
row AReaL's dataset hands a workflow for one prompt."""

from __future__ import annotations

CALLS = (
    "The shape is small.\n</think>\n"
    '<tool_call>\n{"name": "crop_video", "arguments": {"start_time": 0, "end_time": 10}}\n'
    "</tool_call>\n"
    '<tool_call>\n{"name": "crop_video", "arguments": {"start_time": 10, "end_time": 20}}\n'
    "</tool_call>"
)


def data_of(prompt) -> dict:
    return {
        "id": prompt.id,
        "video": prompt.video,
        "question": prompt.question,
        "target": prompt.target,
        "options": list(prompt.options),
        "kind": prompt.kind,
        "prompt": prompt.prompt,
    }
