"""Encoded frames kept in memory (LRU) and optionally on disk, each set made exactly once.

Several samples of one video (VideoMME has three questions per video) ask for the same
overview frames at the same moment; the first caller produces them and the others wait for
it. With a disk directory, reruns and other processes reuse them too.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

# A cached entry: one (metadata, payload) pair per frame.
Entry = Sequence[tuple[dict[str, Any], bytes]]


class FrameCache:
    """A thread-safe, single-flight cache of frame sets; `stats` counts what happened."""

    def __init__(self, max_entries: int = 256, disk_dir: str | Path | None = None):
        self.max_entries = max_entries
        self.disk_dir = Path(disk_dir) if disk_dir else None
        self.stats: Counter[str] = Counter()
        self._memory: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._inflight: dict[Hashable, threading.Lock] = {}

    def set_disk_dir(self, disk_dir: str | Path | None) -> None:
        self.disk_dir = Path(disk_dir) if disk_dir else None

    def get_or_make(
        self,
        key: Hashable,
        make: Callable[[], Any],
        *,
        dump: Callable[[Any], Entry],
        load: Callable[[Entry], Any],
    ) -> Any:
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                self.stats["memory_hits"] += 1
                return self._memory[key]
            flight = self._inflight.setdefault(key, threading.Lock())
        with flight:
            with self._lock:  # another thread may have made it while we waited
                if key in self._memory:
                    self.stats["memory_hits"] += 1
                    return self._memory[key]
            value = self._from_disk(key, load)
            if value is None:
                value = make()
                self.stats["made"] += 1
                self._to_disk(key, dump(value))
            with self._lock:
                self._memory[key] = value
                while len(self._memory) > self.max_entries:
                    self._memory.popitem(last=False)
                self._inflight.pop(key, None)
            return value

    def peek(self, key: Hashable) -> Any:
        """The value for ``key`` if it is in memory now, else None; never makes or loads one."""
        with self._lock:
            if key not in self._memory:
                return None
            self._memory.move_to_end(key)
            self.stats["memory_hits"] += 1
            return self._memory[key]

    def find(self, pick: Callable[[Hashable, Any], Any]) -> Any:
        """The first non-None ``pick(key, value)`` over the values in memory, or None; never
        makes or loads one."""
        with self._lock:
            entries = list(self._memory.items())
        for key, value in reversed(entries):  # the most recently used first
            if (found := pick(key, value)) is not None:
                return found
        return None

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()

    def _path(self, key: Hashable) -> Path:
        digest = hashlib.sha256(repr(key).encode()).hexdigest()
        return self.disk_dir / digest[:2] / f"{digest}.frames"

    def _from_disk(self, key: Hashable, load: Callable[[Entry], Any]) -> Any:
        if self.disk_dir is None:
            return None
        path = self._path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            entry = _unpack(data)
        except (ValueError, struct.error, json.JSONDecodeError):
            path.unlink(missing_ok=True)  # a torn write; make it again
            return None
        self.stats["disk_hits"] += 1
        return load(entry)

    def _to_disk(self, key: Hashable, entry: Entry) -> None:
        if self.disk_dir is None:
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(_pack(entry))
        os.replace(tmp, path)
        self.stats["disk_writes"] += 1


def _pack(entry: Entry) -> bytes:
    header = json.dumps([meta | {"bytes": len(payload)} for meta, payload in entry]).encode()
    return struct.pack("<I", len(header)) + header + b"".join(p for _, p in entry)


def _unpack(data: bytes) -> list[tuple[dict[str, Any], bytes]]:
    (size,) = struct.unpack_from("<I", data)
    metas = json.loads(data[4 : 4 + size])
    offset, out = 4 + size, []
    for meta in metas:
        n = meta.pop("bytes")
        if offset + n > len(data):
            raise ValueError("truncated frame cache entry")
        out.append((meta, data[offset : offset + n]))
        offset += n
    return out
