"""The ParaVT release's RL rollout parity episodes: two RL parquet rows, the two recipes
(PARA-GRPO's prefix and suffix, and vanilla), and the main agent's scripted generations of
each rollout.

Shared by `tests/parity/record_release_rollouts.py` (which runs the release's own rollout
code on them) and `tests/agents/protocols/test_release_rollouts.py` (which runs this project
on them); the videos and call texts are the evaluation episodes' (`release_episodes`).
Standard library only: the recorder runs under another Python.
"""

from __future__ import annotations

import json

from tests.parity.release_episodes import SECONDS, call_text, raw_call_text

RL_SYSTEM = (
    "You are a helpful assistant that watches videos. Think inside <think></think>, call "
    "crop_video when you need a closer look, and answer inside <answer></answer>."
)
RL_ROWS = {  # ParaVT RL parquet rows: prompt (with the <video> placeholder), videos, extra_info
    "rl_mcq": {
        "prompt": [
            {"role": "system", "content": RL_SYSTEM},
            {
                "role": "user",
                "content": "<video>\nWhich colour is the block at the end?\n"
                "A. red\nB. blue\nC. green\nD. white",
            },
        ],
        "videos": [{"video": "fx_a.mp4"}],
        "extra_info": json.dumps({"answer": "B", "question_type": "mcq"}),
    },
    "rl_bare": {  # no system prompt in the row: the tools message stands alone
        "prompt": [{"role": "user", "content": "<video>When does the block turn blue?"}],
        "videos": [{"video": "fx_e.mp4"}],
        "extra_info": json.dumps({"answer": "[15.0, 30.0]", "question_type": "tvg"}),
    },
}
SUB_REPLY = "A coloured block slides from left to right across a dark frame."
RL_RECIPES = {
    "paragrpo": {"THINK_PREFIX": "1", "ANSWER_SUFFIX": "1"},
    "vanilla": {"THINK_PREFIX": "0", "ANSWER_SUFFIX": "0"},
}


def rl_script(name: str, row: str) -> list[dict]:
    """The main agent's generations of one rollout: text, and whether the model stopped
    (False: cut off at the token cap, no <|im_end|>)."""
    d = SECONDS[RL_ROWS[row]["videos"][0]["video"].removesuffix(".mp4")]
    think = "The overview is coarse; I look closer.\n</think>\n"
    answer = "It turns blue halfway.\n</think>\n<answer>B</answer>"
    if name == "direct":
        return [{"text": answer, "stopped": True}]
    if name == "parallel":
        calls = call_text(1, round(d / 3, 1)) + "\n" + call_text(round(d / 2, 1), d)
        return [{"text": think + calls, "stopped": True}, {"text": answer, "stopped": True}]
    if name == "every_turn":  # four generations, all calling: the last calls run, then it ends
        return [
            {
                "text": think + call_text(round(k * d / 4, 1), round((k + 1) * d / 4, 1)),
                "stopped": True,
            }
            for k in range(4)
        ]
    if name == "odd_windows":
        calls = [
            call_text(round(d * 0.6, 1), round(d * 0.2, 1)),  # reversed: the sub-agent refuses
            raw_call_text({"start": 1, "end": 4}),  # start/end keys
            call_text(round(d * 0.8, 1), d + 20),  # the end is clamped to the video
            call_text(d + 1, d + 5),  # starts past the end: refused
        ]
        return [
            {"text": think + "\n".join(calls), "stopped": True},
            {"text": answer, "stopped": True},
        ]
    if name == "unclosed":  # the last call cut off by the token cap, after complete JSON
        call = json.dumps({"name": "crop_video", "arguments": {"start_time": 2, "end_time": 5}})
        return [
            {"text": think + "<tool_call>\n" + call, "stopped": False},
            {"text": answer, "stopped": True},
        ]
    if name == "tool_code":
        code = f"<tool_code>crop_video(start_time=1, end_time={round(d / 2, 1)})</tool_code>"
        return [{"text": think + code, "stopped": True}, {"text": answer, "stopped": True}]
    raise ValueError(name)


def rl_episodes() -> list[dict]:
    out = []
    for recipe in RL_RECIPES:
        for name in ("direct", "parallel", "every_turn", "odd_windows", "unclosed", "tool_code"):
            out.append(
                {
                    "id": f"rl-{recipe}-rl_mcq-{name}",
                    "recipe": recipe,
                    "row": "rl_mcq",
                    "script": name,
                }
            )
        out.append(
            {
                "id": f"rl-{recipe}-rl_bare-parallel",
                "recipe": recipe,
                "row": "rl_bare",
                "script": "parallel",
            }
        )
    return out


def rl_replies(episode: dict) -> list[dict]:
    """The generations of an RL episode as its recipe has the model write them: with the
    Think Prefix prefilled the text opens inside the think block, without it the model
    writes ``<think>`` itself."""
    prefilled = RL_RECIPES[episode["recipe"]]["THINK_PREFIX"] == "1"
    replies = rl_script(episode["script"], episode["row"])
    return [r if prefilled else {**r, "text": "<think>\n" + r["text"]} for r in replies]
