"""The release-protocol parity episodes: fixture items of the seven benchmarks the ParaVT release
evaluates, in the release's Hugging Face schema and in this project's on-disk formats, and the
scripted model replies of each episode.

Shared by `tests/parity/record_release_requests.py` (which runs the release's own driver on
them) and `tests/agents/protocols/test_release_protocol.py` (which runs this project on them).
Standard library only: the recorder runs under another Python.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "release_protocol"
VIDEOS_DIR = DATA / "videos"

VIDEOS = {  # name: (width, height, seconds, frame rate)
    "fx_a": (320, 240, 12.0, "30"),
    "fx_b": (176, 144, 20.0, "24"),
    "fx_c": (480, 270, 9.0, "30000/1001"),
    "fx_d": (160, 120, 2.0, "10"),  # 20 frames: too few for 64 overview frames
    "fx_e": (256, 144, 30.0, "25"),
}
SECONDS = {name: spec[2] for name, spec in VIDEOS.items()}

SRT = (
    '1\n00:00:00,500 --> 00:00:02,000\n<font color="white" size=".72c">A red square '
    'enters.</font>\n\n2\n00:00:03,000 --> 00:00:05,500\n<font color="white" size=".72c">'
    'Then a blue one.</font>\n<font color="white" size=".72c">It stays.</font>\n'
)

# One item per benchmark, as the release's datasets hold it (Hugging Face rows).
ITEMS = {
    "videomme": {
        "video": "fx_a",
        "gold": "B",
        "row": {
            "video_id": "001",
            "duration": "short",
            "domain": "Knowledge",
            "sub_category": "Humanity & History",
            "url": "https://www.youtube.com/watch?v=fx_a",
            "videoID": "fx_a",
            "question_id": "001-1",
            "task_type": "Counting Problem",
            "question": "How many squares cross the frame?",
            "options": ["A. One.", "B. Two.", "C. Three.", "D. Four."],
            "answer": "B",
        },
    },
    "longvideobench": {
        "video": "fx_b",
        "gold": "C",
        "row": {
            "video_id": "fx_b",
            "id": "fx_b_0",
            "video_path": "fx_b.mp4",
            "subtitle_path": "",
            "question": "Which colour is the moving block?",
            "option0": "red",
            "option1": "green",
            "option2": "blue",
            "option3": "yellow",
            "option4": "N/A",
            "correct_choice": 2,
            "duration": 20.0,
            "duration_group": 15,
            "question_category": "S2A",
            "topic_category": "KS-Knowledge",
            "starting_timestamp_for_subtitles": 0.0,
        },
    },
    "lvbench": {
        "video": "fx_e",
        "gold": "A",
        "row": {
            "uid": "7001",
            "video_path": "fx_e.mp4",
            "key": "fx_e",
            "type": "documentary",
            "question": "What happens first?\n(A) A square appears\n(B) The screen goes dark"
            "\n(C) A circle appears\n(D) Nothing",
            "answer": "A",
            "question_type": ["event understanding"],
            "time_reference": "00:02",
        },
    },
    "mlvu": {
        "video": "fx_c",
        "gold": "D",
        "row": {
            "video_name": "fx_c.mp4",
            "question": "What shape is shown at the end?",
            "candidates": ["circle", "triangle", "star", "square"],
            "answer": "square",
            "task_type": "needle",
            "duration": 9.0,
        },
    },
    "mmvu": {
        "video": "fx_b",
        "gold": "E",
        "row": {
            "id": "mmvu-1",
            "question_type": "multiple-choice",
            "video": "https://huggingface.co/datasets/yale-nlp/MMVU/resolve/main/videos/Art/fx_b.mp4",
            "question": "Which motion does the block follow?",
            "choices": {"A": "circle", "B": "zigzag", "C": "spiral", "D": "none", "E": "line"},
            "answer": "E",
            "metadata": {"subject": "Art"},
        },
    },
    "mmvu_short": {  # a 2 s video: the release's 64-frame overview fails, crops still work
        "video": "fx_d",
        "gold": "A",
        "row": {
            "id": "mmvu-2",
            "question_type": "multiple-choice",
            "video": "https://huggingface.co/datasets/yale-nlp/MMVU/resolve/main/videos/Art/fx_d.mp4",
            "question": "Is anything shown?",
            "choices": {"A": "yes", "B": "no", "C": "", "D": "", "E": ""},
            "answer": "A",
            "metadata": {"subject": "Art"},
        },
    },
    "charades": {
        "video": "fx_a",
        "gold": [2.1, 6.4],
        "row": {"video": "fx_a.mp4", "caption": "person opens a door.", "timestamp": [2.1, 6.4]},
    },
}

# The release's dataset names -> the fixture items each holds.
RELEASE_DATASETS = {
    "videomme": ["videomme"],
    "videomme_wsub": ["videomme"],
    "longvideobench": ["longvideobench"],
    "lvbench": ["lvbench"],
    "mlvu": ["mlvu"],
    "mmvu": ["mmvu", "mmvu_short"],
    "charades": ["charades"],
}


def call_text(start, end, **extra) -> str:
    arguments = {"video_path": "video.mp4", "start_time": start, "end_time": end, **extra}
    return (
        f"<tool_call>\n{json.dumps({'name': 'crop_video', 'arguments': arguments})}\n</tool_call>"
    )


def raw_call_text(arguments) -> str:
    return (
        f"<tool_call>\n{json.dumps({'name': 'crop_video', 'arguments': arguments})}\n</tool_call>"
    )


def _final(item: str, *, forced: bool = False, wrong: bool = False) -> str:
    gold = ITEMS[item]["gold"]
    if isinstance(gold, list):
        start, end = (gold[0] + 0.4, gold[1] + 1.0) if wrong else gold
        answer = f"The event happens in the {start:.1f} - {end:.1f} seconds."
        return (
            answer
            if forced
            else f"<think>\nIt is in the windows I saw.\n</think>\n<answer>{answer}</answer>"
        )
    letter = "A" if wrong and gold != "A" else ("B" if wrong else gold)
    return (
        letter
        if forced
        else f"<think>\nThe windows settle it.\n</think>\n<answer>{letter}</answer>"
    )


def script(name: str, item: str) -> list[str]:
    """The model's replies, in order, for one episode of `item` under script `name`."""
    d = SECONDS[ITEMS[item]["video"]]
    think = "<think>\nThe overview is not enough; I look closer.\n</think>\n"
    if name == "direct":
        return [_final(item)]
    if name == "plain":  # direct and reasoning modes: one reply
        return [f"<think>\nI watched it.\n</think>\n<answer>{_final(item, forced=True)}</answer>"]
    if name == "parallel":
        calls = (
            call_text(round(d * 0.1, 1), round(d * 0.4, 1)) + "\n" + call_text(round(d * 0.5, 1), d)
        )
        return [think + calls, _final(item, wrong=True)]
    if name == "every_turn":
        return [
            think + call_text(0, round(d / 3, 2)),
            think + call_text(round(d / 3, 2), round(2 * d / 3, 2)) + "\n" + call_text(1, 2.5),
            think + call_text(round(2 * d / 3, 2), d),
            _final(item, forced=True),
        ]
    if name == "over_cap":
        step = d / 7
        calls = "\n".join(call_text(round(k * step, 2), round((k + 1) * step, 2)) for k in range(7))
        return [think + calls, _final(item)]
    if name == "odd_windows":
        calls = [
            call_text(round(d * 0.6, 1), round(d * 0.2, 1)),  # reversed
            call_text(d + 5, d + 10),  # past the end
            call_text("0:01", "0:04"),  # mm:ss strings
            raw_call_text({"start": 1, "end": 3.5}),  # start/end keys
            raw_call_text({"start_time": round(d / 2, 1)}),  # no end: start + 10 s
            call_text(round(d * 0.9, 2), d + 30),  # runs past the end
        ]
        inside = "<think>\nMaybe " + call_text(0, 1) + " first.\n</think>\n"  # a call in the think
        return [inside + "\n".join(calls), _final(item, wrong=True)]
    if name == "tool_code":
        call = f'crop_video(video_path="video.mp4", start_time=1, end_time={d / 2})'
        code = f"<tool_code>{call}</tool_code>"
        return [think + code, _final(item)]
    if name == "bad_call":  # a call that is not an object: the release errors the sample
        return [think + "<tool_call>\n[1, 2]\n</tool_call>"]
    raise ValueError(name)


AGENTIC_SCRIPTS = ("direct", "parallel", "every_turn", "over_cap", "odd_windows", "tool_code")


def episodes() -> list[dict]:
    """Every episode: id, the release's dataset, the fixture item, mode, channel, script."""
    out = []

    def add(dataset, item, mode, channel, name):
        out.append(
            {
                "id": f"{dataset}-{item}-{mode}-{channel}-{name}",
                "dataset": dataset,
                "item": item,
                "mode": mode,
                "channel": channel,
                "script": name,
            }
        )

    for dataset, items in RELEASE_DATASETS.items():
        item = items[0]
        for name in AGENTIC_SCRIPTS:
            add(dataset, item, "agentic_general", "image_url", name)
        add(dataset, item, "direct", "image_url", "plain")
        add(dataset, item, "reasoning", "image_url", "plain")
    add("charades", "charades", "agentic_minimal", "image_url", "parallel")
    add("charades", "charades", "agentic_minimal", "image_url", "every_turn")
    add("charades", "charades", "agentic_minimal", "video_url", "parallel")
    add("videomme", "videomme", "agentic_general", "video_url", "parallel")
    add("mmvu", "mmvu_short", "agentic_general", "image_url", "parallel")
    add("videomme", "videomme", "agentic_general", "image_url", "bad_call")
    return out


# ----------------------------------------------------------------------------- layouts


def _link(video: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        os.symlink(VIDEOS_DIR / f"{video}.mp4", target)


def release_layout(hf_home: Path) -> dict[str, str]:
    """Place the videos where the release's loaders look under ``$HF_HOME``; returns the
    environment variables it reads for MLVU and MMVU."""
    _link("fx_a", hf_home / "videomme/data/fx_a.mp4")
    (hf_home / "videomme/subtitle").mkdir(parents=True, exist_ok=True)
    (hf_home / "videomme/subtitle/fx_a.srt").write_text(SRT)
    _link("fx_b", hf_home / "datasets/longvideobench/videos/fx_b.mp4")
    _link("fx_e", hf_home / "lvbench/fx_e.mp4")
    _link("fx_c", hf_home / "MLVU/video/fx_c.mp4")
    for name in ("fx_b", "fx_d"):
        _link(name, hf_home / f"mmvu/videos/Art/{name}.mp4")
    _link("fx_a", hf_home / "charades_sta/Charades_v1_480/fx_a.mp4")
    return {
        "PARAVT_MLVU_VIDEO_DIR": str(hf_home / "MLVU/video"),
        "PARAVT_MMVU_VIDEO_DIR": str(hf_home / "mmvu"),
    }


def project_layout(root: Path, dataset: str, item: str) -> tuple[str, Path, dict]:
    """Write `item` in this project's on-disk format of `dataset`'s benchmark under `root`:
    (task name, data dir, loader options). Needs pyarrow for Video-MME's parquet."""
    spec, row = ITEMS[item], ITEMS[item]["row"]
    data = root / dataset / item
    if data.exists():
        shutil.rmtree(data)
    if dataset in ("videomme", "videomme_wsub"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        (data / "videomme").mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist([row]), data / "videomme/test-00000-of-00001.parquet")
        _link(spec["video"], data / "data" / f"{row['videoID']}.mp4")
        (data / "subtitle").mkdir()
        (data / "subtitle" / f"{row['videoID']}.srt").write_text(SRT)
        return "videomme", data, ({"subtitles": True} if dataset == "videomme_wsub" else {})
    if dataset == "longvideobench":
        data.mkdir(parents=True)
        (data / "lvb_val.json").write_text(json.dumps([row]))
        _link(spec["video"], data / "videos" / row["video_path"])
        return "longvideobench", data, {}
    if dataset == "lvbench":
        data.mkdir(parents=True)
        qa = {k: row[k] for k in ("uid", "question", "answer", "question_type", "time_reference")}
        line = {
            "key": row["key"],
            "type": row["type"],
            "video_info": {"duration_minutes": 0.5},
            "qa": [qa],
        }
        (data / "video_info.meta.jsonl").write_text(json.dumps(line) + "\n")
        _link(spec["video"], data / "videos" / f"{row['key']}.mp4")
        return "lvbench", data, {}
    if dataset == "mlvu":
        (data / "json").mkdir(parents=True)
        record = {
            "video": row["video_name"],
            "duration": row["duration"],
            "question": row["question"],
            "candidates": row["candidates"],
            "answer": row["answer"],
            "question_type": "findNeedle",
        }
        (data / "json" / "2_needle.json").write_text(json.dumps([record]))
        _link(spec["video"], data / "video" / "2_needle" / row["video_name"])
        return "mlvu", data, {}
    if dataset == "mmvu":
        data.mkdir(parents=True)
        (data / "validation.json").write_text(json.dumps([row]))
        _link(spec["video"], data / "videos" / "Art" / f"{spec['video']}.mp4")
        return "mmvu", data, {}
    if dataset == "charades":
        data.mkdir(parents=True)
        start, end = row["timestamp"]
        stem = row["video"].removesuffix(".mp4")
        (data / "charades_sta_test.txt").write_text(f"{stem} {start} {end}##{row['caption']}\n")
        _link(spec["video"], data / "Charades_v1_480" / row["video"])
        return "charades", data, {}
    raise ValueError(dataset)


def fixture_data_root(root: Path) -> Path:
    """One item per benchmark, each in its published layout, under ``root/<benchmark>``: the
    ``--data-root`` of ``app.py eval table1`` on fixture data."""
    for dataset, item in (
        ("videomme", "videomme"),
        ("longvideobench", "longvideobench"),
        ("lvbench", "lvbench"),
        ("mlvu", "mlvu"),
        ("mmvu", "mmvu"),
        ("charades", "charades"),
    ):
        _, data, _ = project_layout(root / "_items", dataset, item)
        target = root / dataset
        if not target.exists():
            target.symlink_to(data, target_is_directory=True)
    return root
