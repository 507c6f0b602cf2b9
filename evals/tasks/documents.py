"""What the image and document QA tasks share: the "Final Answer:" format, annotation files
in JSON, JSONL or parquet, and images given as paths or as bytes inside the records.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.media import MediaIndex
from evals.sample import RecordError, Sample
from evals.scorers.base import final_answer

__all__ = ["final_answer"]

ANSWER_FORMAT = "End your reply with one line: Final Answer: <answer>"
IMAGE_DIRS = ("images", "image", "data", "")
_MAGIC = ((b"\x89PNG", ".png"), (b"\xff\xd8", ".jpg"), (b"GIF8", ".gif"), (b"BM", ".bmp"))


def annotation_files(data_dir: Path, patterns: Sequence[str], folders: Sequence[str]) -> list[Path]:
    """The first non-empty match of ``patterns`` (in order) in ``folders`` (in order)."""
    for folder in folders:
        for pattern in patterns:
            found = sorted((data_dir / folder).glob(pattern))
            if found:
                return found
    wanted = ", ".join(f"{f or '.'}/{p}" for f in folders for p in patterns[:2])
    raise FileNotFoundError(f"no annotations under {data_dir}: expected one of {wanted}, ...")


def read_records(path: Path) -> Iterator[tuple[str | None, Any]]:
    """(key, record) pairs of a .parquet, .jsonl or .json file. The key is the record's key
    in a JSON object of records, else None; a torn JSONL line comes back as a RecordError."""
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as err:
            raise ImportError(f"reading {path} needs pyarrow: pip install pyarrow") from err
        for batch in pq.ParquetFile(path).iter_batches(batch_size=64):  # pages are big
            for row in batch.to_pylist():
                yield None, row
    elif path.suffix == ".jsonl":
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    yield None, json.loads(line)
                except json.JSONDecodeError as err:
                    yield None, RecordError(str(path), f"line {number}", f"not JSON: {err}")
    else:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path} is not JSON: {err}") from None
        if isinstance(data, Mapping):
            for key in ("data", "annotations", "questions"):
                if isinstance(data.get(key), list):
                    data = data[key]
                    break
        if isinstance(data, Mapping):
            yield from ((str(k), v) for k, v in data.items())
        elif isinstance(data, list):
            yield from ((None, record) for record in data)
        else:
            raise ValueError(f"{path}: expected a list or an object of records")


def image_file(value: Any, *, media: MediaIndex, image_dir: Path) -> tuple[str, bool] | None:
    """(absolute path, exists) of an image given as a path, raw bytes, or an HF image struct
    (``{"bytes": ..., "path": ...}``); bytes are written under ``image_dir`` by content hash.
    None when the value holds no image."""
    if isinstance(value, Mapping):
        data, name = value.get("bytes"), value.get("path")
        if data:
            return _write_image(bytes(data), image_dir, Path(name or "").suffix), True
        value = name
    if isinstance(value, bytes | bytearray) and value:
        return _write_image(bytes(value), image_dir, ""), True
    if isinstance(value, str) and value.strip():
        found = media.find(value.strip())
        if found is not None:
            return str(found.resolve()), True
        return str((media.root / value.strip()).resolve()), False
    return None


def _write_image(data: bytes, folder: Path, suffix: str) -> str:
    ext = next((e for magic, e in _MAGIC if data.startswith(magic)), None)
    if ext is None:
        ext = ".webp" if data[8:12] == b"WEBP" else (suffix or ".img")
    path = (folder / (hashlib.sha1(data).hexdigest()[:20] + ext)).resolve()
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(path.suffix + ".part")
        partial.write_bytes(data)
        partial.replace(path)
    return str(path)


def text_list(value: Any, field: str, source: str, rid: str) -> list[str]:
    """A list-of-strings field (a bare string counts as a list of one)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence) and value and all(v is not None for v in value):
        return [str(v) for v in value]
    raise RecordError(source, rid, f"{field} must be a non-empty list of strings, got {value!r}")


# Charts and pages need detail: about 896x896 pixels per image, not 224x224.
DOCUMENT_CONTEXT = {"overview_max_pixels": 802_816, "crop_max_pixels": 802_816}


def collect_samples(
    files: Sequence[Path],
    to_sample: Callable[[Any, str, str], Sample],
    *,
    duplicate: str = "duplicate id",
) -> tuple[list[Sample], list[RecordError], list[str]]:
    """(samples, malformed records, missing media) over every record of the files, in order.

    `to_sample(record, rid, source)` gets the record's key in a JSON object of records, else
    its running row number, as `rid`; a RecordError it raises is collected, not raised.
    """
    samples, errors, missing, seen = [], [], {}, set()
    row = 0
    for path in files:
        for key, record in read_records(path):
            rid = key or str(row)
            row += 1
            try:
                sample = to_sample(record, rid, str(path))
                if sample.id in seen:
                    raise RecordError(str(path), sample.id, duplicate)
            except RecordError as err:
                errors.append(err)
                continue
            seen.add(sample.id)
            if not Path(sample.media).exists():
                missing.setdefault(sample.media, None)
            samples.append(sample)
    return samples, errors, list(missing)


def mean_metrics(metrics: Sequence[Mapping[str, float]], keys: Sequence[str]) -> dict[str, float]:
    """The mean of each key over every item; NaN when there are none."""
    if not metrics:
        return dict.fromkeys(keys, math.nan)
    return {k: sum(m[k] for m in metrics) / len(metrics) for k in keys}
