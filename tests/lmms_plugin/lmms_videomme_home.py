"""A Hugging Face home in which lmms-eval's own ``videomme`` task (unmodified) finds its data
offline: what a user has after one online run, made from the fixture task's rows.

Run by the lmms-eval environment's python (its `datasets` writes the cache it will read):

    .venv-lmms/bin/python tests/lmms_plugin/lmms_videomme_home.py HF_HOME [N_ROWS]

- ``$HF_HOME/videomme/data/<videoID>.mp4``: where lmms-eval extracts Video-MME's video zips
  (its ``dataset_kwargs.cache_dir``), so it downloads nothing when the folder is there;
- ``$HF_HOME/hub/datasets--lmms-eval--Video-MME/snapshots/<rev>/videomme/
  test-00000-of-00001.parquet``: the published annotation file, in the Hub cache's layout;
- ``$HF_HOME/datasets/lmms-eval___video-mme/...``: that parquet prepared by `datasets`' own
  parquet builder under the repo's name, which ``load_dataset("lmms-eval/Video-MME")`` reads
  back when the Hub is offline, as it does for a dataset it downloaded before.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from datasets.packaged_modules.parquet.parquet import Parquet

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "lmms_eval_task"
REPO, REVISION = "lmms-eval/Video-MME", "0" * 40


def make_home(hf_home: Path, rows: int | None = None) -> list[dict]:
    """Lay the fixture rows (the first `rows`) out under `hf_home`; returns the rows."""
    records = [json.loads(line) for line in (FIXTURE / "rows.jsonl").read_text().splitlines()]
    records = records[:rows]
    data = hf_home / "videomme" / "data"
    data.mkdir(parents=True, exist_ok=True)
    for record in records:
        target = data / f"{record['videoID']}.mp4"
        if not target.exists():
            target.symlink_to((FIXTURE / "videos" / target.name).resolve())
    snapshot = hf_home / "hub" / f"datasets--{REPO.replace('/', '--')}" / "snapshots" / REVISION
    parquet = snapshot / "videomme" / "test-00000-of-00001.parquet"
    parquet.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(records), parquet)
    refs = snapshot.parents[1] / "refs"
    refs.mkdir(exist_ok=True)
    (refs / "main").write_text(REVISION)
    # The builder a Hub download runs (parquet, config "videomme" as the repo's README names
    # it). It takes local files only without a repo_id, so it writes under the bare name,
    # and the folder moves to the repo's ("lmms-eval___video-mme"), where a download puts it.
    staging = hf_home / "datasets" / ".staging"
    builder = Parquet(
        cache_dir=str(staging),
        dataset_name=REPO.split("/")[1],
        config_name="videomme",
        config_id="videomme",
        data_files={"test": [str(parquet)]},
        hash=REVISION,
    )
    builder.download_and_prepare()
    target = hf_home / "datasets" / REPO.replace("/", "___").lower()
    if not target.exists():
        os.replace(staging / REPO.split("/")[1].lower(), target)
    shutil.rmtree(staging, ignore_errors=True)
    return records


if __name__ == "__main__":
    home = Path(sys.argv[1])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    made = make_home(home, int(sys.argv[2]) if len(sys.argv) > 2 else None)
    print(json.dumps([r["videoID"] for r in made]))
