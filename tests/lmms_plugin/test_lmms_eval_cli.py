"""`lmms-eval --model paravt` for real: released lmms-eval 0.7.3's own command line, in its own
environment (`make lmms-env`), against paravt-nano on the local CPU server, offline.

- a task of lmms-eval's own format (tests/fixtures/lmms_eval_task, modelled on its videomme
  task) through --include_path: its results JSON and samples file, the board runs and
  traces carrying its task and doc ids, and per-item scores equal to `app.py eval rescore`
  with the lmms_eval profile on the same replies; then its --use_cache, and this project's
  resume by document;
- lmms-eval's own `videomme` task, unmodified, its data in the published layout under
  HF_HOME (tests/lmms_plugin/lmms_videomme_home.py);
- bad input: a --model_args key that is no knob, a task without video, a dead endpoint.

Without the environment the tests skip and say how to make it; PARAVT_LMMS_REQUIRED=1 (CI)
makes that a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from evals.records import SampleLog, sample_to_json
from evals.spec import EvalSpec
from evals.tasks import videomme
from serving.launch import free_port

ROOT = Path(__file__).resolve().parents[2]
TASK_DIR = ROOT / "tests/fixtures/lmms_eval_task"
ROWS = [json.loads(line) for line in (TASK_DIR / "rows.jsonl").read_text().splitlines()]
LMMS_VENV = Path(os.environ.get("PARAVT_LMMS_VENV", ROOT / ".venv-lmms"))
FIXTURE_TASK = "paravt_fixture_videomme"
SCORE = "videomme_perception_score"

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@pytest.fixture(scope="module")
def lmms_bin() -> Path:
    binary = LMMS_VENV / "bin" / "lmms-eval"
    if not binary.exists():
        why = f"no lmms-eval environment at {LMMS_VENV}: `make lmms-env` makes it"
        if os.environ.get("PARAVT_LMMS_REQUIRED") == "1":
            pytest.fail(f"{why} (PARAVT_LMMS_REQUIRED=1: CI must install it, see .ci/run)")
        pytest.skip(why)
    return binary


def lmms_eval(binary: Path, *args: str, cwd: Path, hf_home: Path, timeout: float = 900):
    """Run lmms-eval offline; its whole output comes back as `.out`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARAVT_")}
    env.update(
        HF_HOME=str(hf_home),
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        OMP_NUM_THREADS="1",
        WANDB_MODE="disabled",
        PYTHONUNBUFFERED="1",
    )
    done = subprocess.run(
        [str(binary), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    done.out = done.stdout + done.stderr
    return done


def fixture_run(binary, tmp: Path, *extra: str, model_args: str = ""):
    args = f"home={tmp / 'home'}" + (f",{model_args}" if model_args else "")
    return lmms_eval(
        binary,
        "--model",
        "paravt",
        "--model_args",
        args,
        "--include_path",
        ".",
        "--tasks",
        FIXTURE_TASK,
        "--log_samples",
        "--output_path",
        str(tmp / "out"),
        *extra,
        cwd=TASK_DIR,
        hf_home=tmp / "hf",
    )


def outputs(out: Path) -> tuple[dict, list[dict]]:
    """lmms-eval's newest results JSON and its samples, by doc id."""
    [results] = sorted(out.rglob("*_results.json"))[-1:]
    [samples] = sorted(out.rglob("*_samples_*.jsonl"))[-1:]
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    return json.loads(results.read_text()), sorted(lines, key=lambda line: line["doc_id"])


def reply(line: dict) -> str:
    """The reply lmms-eval got: its samples file flattens one request's list to its string,
    and leaves `resps` out when stripping the reasoning changed nothing."""
    return line["resps"] if "resps" in line else line["filtered_resps"]


def board_runs(home: Path) -> list[dict]:
    with sqlite3.connect(home / "board.sqlite") as conn:
        conn.row_factory = sqlite3.Row
        runs = [dict(r) for r in conn.execute("select * from runs order by started_at")]
        traces = {
            r["run_id"]: json.loads(r["trace"])
            for r in conn.execute("select run_id, trace from traces")
        }
    return [
        {**run, "source": json.loads(run["source"]), "trace": traces[run["run_id"]]} for run in runs
    ]


def rescored(tmp: Path, data_dir: Path, media_dir: Path, replies: dict[int, str]) -> list[dict]:
    """`app.py eval rescore --profile lmms_eval` on `replies` (by doc id) of the Video-MME
    rows under `data_dir`, read by this project's loader; its lmms-eval samples, by doc id."""
    loaded = videomme.load(data_dir, media_dir=media_dir)
    assert not loaded.errors and not loaded.missing_media
    spec = EvalSpec(
        task="videomme",
        data_dir=str(data_dir),
        model="paravt-nano",
        context={},
        options={"media_dir": str(media_dir)},
    )
    folder = spec.folder(tmp / "runs")
    folder.mkdir(parents=True)
    (folder / "spec.json").write_text(json.dumps(spec.to_json()))
    log = SampleLog(folder)
    for doc_id, text in replies.items():
        sample = loaded.samples[doc_id]
        log.append(
            {
                "doc_id": doc_id,
                "sample_id": sample.id,
                "target": sample.target,
                "status": "ok",
                "error": None,
                "resps": [text],
                "sample": sample_to_json(sample),
            }
        )
    command = [
        sys.executable,
        str(ROOT / "app.py"),
        "--env-file",
        "",
        "eval",
        "rescore",
        str(folder),
        "--profile",
        "lmms_eval",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    _, lines = outputs(folder / "lmms_eval")
    return lines


def assert_same_scores(lmms_lines: list[dict], ours: list[dict]) -> None:
    assert [line["doc_id"] for line in ours] == [line["doc_id"] for line in lmms_lines]
    for theirs, mine in zip(lmms_lines, ours, strict=True):
        assert mine[SCORE]["score"] == theirs[SCORE]["score"], theirs["doc_id"]
        assert mine[SCORE]["pred_answer"] == theirs[SCORE]["pred_answer"], theirs["doc_id"]


def parquet_dir(tmp: Path, rows: list[dict]) -> Path:
    """The rows as this project's Video-MME loader reads them: videomme/test-*.parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp / "videomme-data"
    (folder / "videomme").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "videomme/test-00000-of-00001.parquet")
    return folder


@pytest.fixture(scope="module")
def first(lmms_bin, tmp_path_factory):
    """The fixture task once, on the local paravt-nano server, with lmms-eval's cache on."""
    tmp = tmp_path_factory.mktemp("lmms")
    done = fixture_run(lmms_bin, tmp, "--use_cache", str(tmp / "cache"))
    assert done.returncode == 0 and "Error during evaluation" not in done.out, done.out[-4000:]
    return tmp, done


def test_a_task_in_lmms_evals_format_runs_the_agent_end_to_end(first):
    tmp, done = first
    assert "starting the local CPU server" in done.out
    results, lines = outputs(tmp / "out")
    scores = [line[SCORE]["score"] for line in lines]
    assert results["results"][FIXTURE_TASK][f"{SCORE},none"] == 100 * sum(scores) / 3
    assert results["config"]["model"] == "paravt"
    assert results["config"]["model_backend"] == "lmms_plugin.model.ParaVT (chat)"
    assert results["n-samples"][FIXTURE_TASK] == {"original": 3, "effective": 3}
    assert [(line["doc_id"], line["target"]) for line in lines] == [
        (i, row["answer"]) for i, row in enumerate(ROWS)
    ]
    assert all(line["token_counts"][0]["input_tokens"] > 0 for line in lines)
    runs = board_runs(tmp / "home")
    assert sorted(r["source"]["doc_id"] for r in runs) == [0, 1, 2]
    for run in runs:
        assert run["source"] == {
            "harness": "lmms-eval",
            "task": FIXTURE_TASK,
            "split": "test",
            "doc_id": run["source"]["doc_id"],
            "repeat": 0,
        }
        assert run["trace"]["source"] == run["source"]
        assert run["video"].endswith(f"{ROWS[run['source']['doc_id']]['videoID']}.mp4")
        line = lines[run["source"]["doc_id"]]
        asked = json.dumps(run["trace"]["model_calls"][0]["messages"])
        assert "Answer with the option's letter from the given choices directly." in asked
        # the reply is the final turn as the chat API gave it, up to the task's stop string
        final = run["trace"]["final_reply"] or ""
        assert final.startswith(reply(line)) and run["trace"]["settings"]["max_new_tokens"] == 256


def test_lmms_evals_scores_equal_this_projects_lmms_eval_profile(first):
    tmp, _ = first
    _, lines = outputs(tmp / "out")
    ours = rescored(
        tmp,
        parquet_dir(tmp, ROWS),
        TASK_DIR / "videos",
        {line["doc_id"]: reply(line) for line in lines},
    )
    assert_same_scores(lines, ours)


def test_lmms_evals_response_cache_answers_a_rerun_without_the_model(lmms_bin, first):
    tmp, _ = first
    before = [reply(line) for line in outputs(tmp / "out")[1]]
    shutil.move(tmp / "home", tmp / "home.kept")  # the plugin would need it to run again
    try:
        again = fixture_run(lmms_bin, tmp, "--use_cache", str(tmp / "cache"))
        assert again.returncode == 0, again.out[-4000:]
        assert "all 3 requests served from cache" in again.out
        assert not (tmp / "home").exists(), "the plugin never ran: nothing written, no server"
    finally:
        shutil.rmtree(tmp / "home", ignore_errors=True)
        shutil.move(tmp / "home.kept", tmp / "home")
    assert len(list((tmp / "out").rglob("*_results.json"))) == 2
    assert [reply(line) for line in outputs(tmp / "out")[1]] == before


def test_a_rerun_resumes_by_document(lmms_bin, first):
    tmp, _ = first
    _, lines = outputs(tmp / "out")
    log = tmp / "home/lmms_eval" / FIXTURE_TASK / "samples.jsonl"
    kept = [json.loads(x) for x in log.read_text().splitlines()]
    log.write_text("".join(json.dumps(r) + "\n" for r in kept if r["doc_id"] != 1))
    again = fixture_run(lmms_bin, tmp)  # no --use_cache: only this project's log can help
    assert again.returncode == 0, again.out[-4000:]
    assert "paravt (chat): 2 of 3 documents answered by an earlier run" in again.out
    runs = board_runs(tmp / "home")
    assert len(runs) == 4 and runs[-1]["source"]["doc_id"] == 1, "only doc 1 ran again"
    _, now = outputs(tmp / "out")
    assert [reply(now[i]) for i in (0, 2)] == [reply(lines[i]) for i in (0, 2)]


@pytest.fixture(scope="module")
def videomme_home(lmms_bin, tmp_path_factory) -> Path:
    """An HF_HOME holding Video-MME's fixture rows and videos as lmms-eval's download leaves
    them (tests/lmms_plugin/lmms_videomme_home.py, run by the lmms-eval environment's
    `datasets`)."""
    hf = tmp_path_factory.mktemp("videomme") / "hf"
    home = ROOT / "tests/lmms_plugin/lmms_videomme_home.py"
    made = subprocess.run(
        [str(LMMS_VENV / "bin/python"), str(home), str(hf)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert made.returncode == 0, made.stderr
    return hf


def videomme_run(lmms_bin, hf: Path, tmp: Path, model_args: str, *extra: str):
    done = lmms_eval(
        lmms_bin,
        "--model",
        "paravt",
        "--model_args",
        f"home={tmp / 'home'},{model_args}",
        "--tasks",
        "videomme",
        "--log_samples",
        "--output_path",
        str(tmp / "out"),
        *extra,
        cwd=tmp,
        hf_home=hf,
    )
    assert done.returncode == 0 and "Error during evaluation" not in done.out, done.out[-4000:]
    return done


def test_lmms_evals_own_videomme_task_runs_unmodified_on_the_published_layout(
    lmms_bin, videomme_home, tmp_path
):
    videomme_run(lmms_bin, videomme_home, tmp_path, "max_new_tokens=256")
    results, lines = outputs(tmp_path / "out")
    assert results["configs"]["videomme"]["dataset_path"] == "lmms-eval/Video-MME"
    assert results["n-samples"]["videomme"] == {"original": 3, "effective": 3}
    runs = sorted(board_runs(tmp_path / "home"), key=lambda r: r["source"]["doc_id"])
    assert [r["source"]["doc_id"] for r in runs] == [0, 1, 2]
    assert [Path(r["video"]).name for r in runs] == [f"{row['videoID']}.mp4" for row in ROWS]
    assert {r["source"]["task"] for r in runs} == {"videomme"}
    for run in runs:  # --model_args beat the task's 16 new tokens; its prompt is asked
        assert run["trace"]["settings"]["max_new_tokens"] == 256
        assert "based on the video and the subtitles" in json.dumps(run["trace"]["model_calls"])
    snapshot = next((videomme_home / "hub").rglob("snapshots/*"))
    ours = rescored(
        tmp_path,
        snapshot,
        videomme_home / "videomme",
        {line["doc_id"]: reply(line) for line in lines},
    )
    assert_same_scores(lines, ours)


def test_the_issues_command_asks_videomme_in_the_releases_words(lmms_bin, videomme_home, tmp_path):
    videomme_run(
        lmms_bin,
        videomme_home,
        tmp_path,
        "protocol=release-eval,prompt_mode="
        "agentic_general,max_parallel=5,overview_frames=4,max_new_tokens=64",
        "--limit",
        "1",
    )
    [run] = board_runs(tmp_path / "home")
    first_turn = run["trace"]["model_calls"][0]["messages"]
    assert first_turn[0]["role"] == "system" and "crop_video" in first_turn[0]["content"]
    question = first_turn[1]["content"][-1]["text"]
    assert question.startswith(
        "Question: What colour is the circle that appears in the video?"
        "\nOptions:\nA. A. green\nB. B. red"
    )
    assert question.endswith("The video path for this video is: needle.mp4")
    assert "Answer with the option's letter" not in question, "the release's text, not the task's"
    assert run["trace"]["settings"]["protocol"] == "release-eval"
    assert run["trace"]["settings"]["temperature"] == 0.0


def test_a_model_args_key_that_is_no_knob_lists_the_valid_keys(lmms_bin, tmp_path):
    done = fixture_run(lmms_bin, tmp_path, model_args="overview_frame=8")
    assert (
        "paravt --model_args: unknown key 'overview_frame'. Valid keys: the plugin's "
        "base_url, model" in done.out
    )
    assert "overview_frames, overview_sampling" in done.out
    assert not list((tmp_path / "out").rglob("*_results.json"))


def test_a_task_without_video_is_refused_before_any_request(lmms_bin, tmp_path):
    done = lmms_eval(
        lmms_bin,
        "--model",
        "paravt",
        "--model_args",
        f"home={tmp_path / 'home'}",
        "--include_path",
        ".",
        "--tasks",
        "paravt_fixture_text_only",
        "--output_path",
        str(tmp_path / "out"),
        cwd=TASK_DIR,
        hf_home=tmp_path / "hf",
    )
    assert "paravt_fixture_text_only has no video or image in doc 0" in done.out
    assert "starting the local CPU server" not in done.out
    assert not (tmp_path / "home").exists(), "nothing ran: no board, no log"
    assert not list((tmp_path / "out").rglob("*_results.json"))


def test_a_dead_endpoint_is_reported_per_document_in_simple_mode_too(lmms_bin, tmp_path):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    done = fixture_run(
        lmms_bin, tmp_path, "--force_simple", model_args=f"base_url={dead},model=nano"
    )
    # --force_simple: each video came from doc_to_visual (else the task would be refused)
    assert "paravt (simple): 0 of 3 documents answered by an earlier run" in done.out
    assert "paravt: 3 of 3 documents have no reply, and none of them is scored" in done.out
    for doc_id in range(3):
        assert f"{FIXTURE_TASK} doc {doc_id}: endpoint: " in done.out
    assert not list((tmp_path / "out").rglob("*_results.json"))
    log = tmp_path / "home/lmms_eval" / FIXTURE_TASK / "samples.jsonl"
    assert [json.loads(x)["status"] for x in log.read_text().splitlines()] == ["error"] * 3
