"""One evaluation across hosts: `eval run --shard I/N` runs a slice, `eval merge` joins them.

A sample's shard is fixed by a hash of its cluster (its video; the sample id when it has
none), so that a cluster is never split and the clustered errors of the merged run are
those of an unsharded one, and by nothing else: not the host, the order of loading, a
missing file elsewhere or the number of samples done. Shard ``I`` of ``N`` (1-based)
writes its own folder, ``<task>-<spec hash>-shard-I-of-N``, with `MANIFEST` saying which
documents it holds and what loading found (the split's size, the records it skipped, the
media it missed), so that `merge` can write the unsharded run's files from the shards
alone: the same samples, scored in document order, the same results and lmms-eval files.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evals.records import SampleLog, write_json_atomic
from evals.sample import Sample
from evals.spec import EvalSpec

MANIFEST = "shard.json"


class MergeRefused(ValueError):
    """The folders cannot be merged as they are; the message says why and what to do."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count``, counted from 1."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``I/N`` as typed on the command line; ValueError with the rule otherwise.

        >>> Shard.parse("2/4")
        Shard(index=2, count=4)
        """
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not match:
            raise ValueError(f"{text!r} is not I/N (for example 1/4)")
        index, count = int(match[1]), int(match[2])
        if count < 1 or not 1 <= index <= count:
            raise ValueError(
                f"{text}: I must be from 1 to N (shards count from 1: 1/{max(count, 1)} "
                f"to {max(count, 1)}/{max(count, 1)})"
            )
        return cls(index, count)

    def holds(self, sample: Sample) -> bool:
        """Whether this shard runs ``sample``: all of a cluster's samples go to one shard."""
        key = (sample.cluster or sample.id).encode("utf-8")
        return (
            int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % self.count == self.index - 1
        )

    def folder(self, spec: EvalSpec, out_root: str | Path) -> Path:
        return Path(f"{spec.folder(out_root)}-shard-{self.index}-of-{self.count}")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def write_manifest(
    folder: Path, shard: Shard, spec: EvalSpec, doc_ids: list[int], load: dict[str, Any]
) -> None:
    """Record the shard's documents and what loading the split found."""
    write_json_atomic(
        folder / MANIFEST,
        {**asdict(shard), "spec_hash": spec.hash, "doc_ids": doc_ids, **load},
    )


@dataclass(frozen=True)
class Merged:
    """The shards' records in document order, and what every shard's loading found."""

    spec: EvalSpec
    records: list[dict[str, Any]]
    load: dict[str, Any]
    shards: list[str]


def read_shards(folders: list[Path]) -> Merged:
    """The records of a complete set of shards of one spec; MergeRefused otherwise."""
    found: dict[int, tuple[Path, dict[str, Any]]] = {}
    specs: dict[str, Path] = {}
    counts = set()
    for folder in folders:
        manifest_path, spec_path = folder / MANIFEST, folder / "spec.json"
        if not manifest_path.is_file() or not spec_path.is_file():
            raise MergeRefused(
                f"{folder} is not a shard folder (no {MANIFEST} or spec.json): "
                "give the folders `eval run --shard I/N` wrote"
            )
        manifest = json.loads(manifest_path.read_text())
        spec = EvalSpec.from_json(json.loads(spec_path.read_text()))
        specs.setdefault(spec.hash, folder)
        counts.add(manifest["count"])
        if manifest["index"] in found:
            other = found[manifest["index"]][0]
            raise MergeRefused(f"{folder} and {other} are both shard {manifest['index']}")
        found[manifest["index"]] = (folder, manifest)
    if len(specs) > 1:
        named = "; ".join(f"{folder} (spec {h})" for h, folder in specs.items())
        raise MergeRefused(f"these shards are of different specs and cannot be merged: {named}")
    if len(counts) > 1:
        raise MergeRefused(f"these shards split the run in different ways: N = {sorted(counts)}")
    (count,) = counts
    missing = [i for i in range(1, count + 1) if i not in found]
    if missing:
        names = ", ".join(f"{i}/{count}" for i in missing)
        raise MergeRefused(
            f"shards {names} are missing: run them (eval run --shard I/{count}) "
            "and give their folders too"
        )
    records: dict[int, dict[str, Any]] = {}
    for index in sorted(found):
        folder, manifest = found[index]
        latest = SampleLog(folder).read()
        by_doc = {r["doc_id"]: r for r in latest.values()}
        undone = [d for d in manifest["doc_ids"] if by_doc.get(d, {}).get("status") is None]
        if undone:
            raise MergeRefused(
                f"shard {index}/{count} ({folder}) has not finished: {len(undone)} of "
                f"{len(manifest['doc_ids'])} samples have no record; rerun it to finish"
            )
        records.update((d, by_doc[d]) for d in manifest["doc_ids"])
    first = found[min(found)][1]
    load = {k: first[k] for k in ("n_docs", "skipped_records", "missing_media", "load_notes")}
    spec = EvalSpec.from_json(json.loads((specs[next(iter(specs))] / "spec.json").read_text()))
    shards = [str(found[i][0]) for i in sorted(found)]
    return Merged(spec, [records[d] for d in sorted(records)], load, shards)
