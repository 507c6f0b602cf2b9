"""Find benchmark media in the layouts users have (data/, videos/, video/, flat)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

MEDIA_DIRS = ("data", "videos", "video", "")
VIDEO_EXTENSIONS = (".mp4", ".MP4", ".mkv", ".webm", ".avi", ".mov")


class MediaIndex:
    """An index of the media files under a data directory, built once per load."""

    def __init__(self, root: str | Path, subdirs: Iterable[str] = MEDIA_DIRS):
        self.root = Path(root)
        self._by_name: dict[str, Path] = {}
        self._by_stem: dict[str, Path] = {}
        for sub in subdirs:
            folder = self.root / sub if sub else self.root
            if not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*") if sub else folder.iterdir()):
                if path.is_file():
                    self._by_name.setdefault(path.name, path)
                    if path.suffix in VIDEO_EXTENSIONS:
                        self._by_stem.setdefault(path.stem, path)

    def find(self, name: str) -> Path | None:
        """A file by its name ("abc.mp4"), its relative path, or a video by its stem ("abc")."""
        direct = self.root / name
        if direct.is_file():
            return direct
        base = Path(name).name
        return self._by_name.get(base) or self._by_stem.get(Path(base).stem)

    def expected(self, name: str) -> str:
        """Where a missing file was looked for, for the error report."""
        return str(self.root / ("{" + ",".join(d or "." for d in MEDIA_DIRS) + "}") / name)
