"""Find benchmark media in the layouts users have (data/, videos/, video/, flat), in an
optional media folder first, and name the zip a missing file is still packed in."""

from __future__ import annotations

import logging
import zipfile
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

MEDIA_DIRS = ("data", "videos", "video", "")
VIDEO_EXTENSIONS = (".mp4", ".MP4", ".mkv", ".webm", ".avi", ".mov")


class MediaIndex:
    """An index of the media files under a data directory, built once per load.

    ``media_dir`` (``eval run --media-dir``) is a second folder, searched recursively and
    before the data directory: for a Hugging Face snapshot whose videos were extracted
    elsewhere (lmms-eval extracts a task's zips into ``$HF_HOME/<task cache>``).
    Nothing is ever extracted here: a file that is only inside a zip is reported missing,
    with the zip named (`expected`, `describe_missing`).
    """

    def __init__(
        self,
        root: str | Path,
        subdirs: Iterable[str] = MEDIA_DIRS,
        *,
        media_dir: str | Path | None = None,
    ):
        self.root = Path(root)
        self.subdirs = tuple(subdirs)
        self.media_dir = Path(media_dir).resolve() if media_dir else None
        if self.media_dir is not None and not self.media_dir.is_dir():
            raise FileNotFoundError(
                f"media dir {self.media_dir} is not a folder: pass the folder that holds the "
                "extracted videos (--media-dir)"
            )
        self._by_name: dict[str, Path] = {}
        self._by_stem: dict[str, Path] = {}
        self._zips: dict[str, Path] | None = None  # zip member path -> its zip, built lazily
        if self.media_dir is not None:
            self._add(sorted(self.media_dir.rglob("*")))
        for sub in self.subdirs:
            folder = self.root / sub if sub else self.root
            if folder.is_dir():
                self._add(sorted(folder.rglob("*") if sub else folder.iterdir()))

    @property
    def roots(self) -> tuple[Path, ...]:
        """The folders searched, in order: the media dir (when given), then the data dir."""
        return (self.media_dir, self.root) if self.media_dir else (self.root,)

    def _add(self, paths: Iterable[Path]) -> None:
        for path in paths:
            if path.is_file():
                self._by_name.setdefault(path.name, path)
                if path.suffix in VIDEO_EXTENSIONS:
                    self._by_stem.setdefault(path.stem, path)

    def find(self, name: str) -> Path | None:
        """A file by its name ("abc.mp4"), its relative path, or a video by its stem ("abc")."""
        for root in self.roots:
            if (root / name).is_file():
                return root / name
        base = Path(name).name
        return self._by_name.get(base) or self._by_stem.get(Path(base).stem)

    def locate(self, relative: str, subdirs: Iterable[str] = ("",)) -> Path | None:
        """The file at exactly ``relative`` under a root or one of its ``subdirs``, roots in
        order (for benchmarks whose file names repeat across folders)."""
        for root in self.roots:
            for sub in subdirs:
                candidate = (root / sub if sub else root) / relative
                if candidate.is_file():
                    return candidate
        return None

    def expected(self, name: str) -> str:
        """Where a missing file was looked for, for the error report."""
        folders = "{" + ",".join(d or "." for d in self.subdirs) + "}"
        where = str(self.root / folders / name)
        if self.media_dir is not None:
            where = f"{self.media_dir}/**/{name} or {where}"
        return self.describe_missing(where, name)

    def describe_missing(self, where: str | Path, name: str) -> str:
        """``where``, plus the zip that still holds ``name`` (a relative path or a file name)
        when one under the searched folders does."""
        archive = self.archive_holding(name)
        if archive is None:
            return str(where)
        return f"{where} (still zipped in {archive}: extract it and pass its folder as --media-dir)"

    def archive_holding(self, name: str) -> Path | None:
        """The zip under a searched folder with a member at ``name`` or ending in /``name``."""
        if self._zips is None:
            self._zips = self._index_zips()
        name = name.strip("/")
        if name in self._zips:
            return self._zips[name]
        return next((z for m, z in self._zips.items() if m.endswith("/" + name)), None)

    def _index_zips(self) -> dict[str, Path]:
        members: dict[str, Path] = {}
        for root in self.roots:
            for archive in sorted(root.rglob("*.zip")):
                try:
                    with zipfile.ZipFile(archive) as packed:
                        names = [i.filename for i in packed.infolist() if not i.is_dir()]
                except (zipfile.BadZipFile, OSError) as err:  # a partial download
                    log.warning("cannot read %s (%s); its members are not listed", archive, err)
                    continue
                for member in names:
                    members.setdefault(member.strip("/"), archive)
        return members
