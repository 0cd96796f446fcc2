"""Watched folders: camera files, photos and voice notes that appear in them are imported by themselves.

`FolderWatch.scan` looks at every file of the watched folders that `find_media` would import (a camera
card's DCIM tree included: nested folders walked, hidden files and the camera's sidecars, .THM and .LRV,
left out by their names). A file is taken only when it is complete: its size and modification time
are the same as at the previous scan (a copy still running changes them between scans, so it is never
imported half-written) and it can be opened for reading. It then goes through the one import path
(`ingest.add_paths`): the same bytes are the same footage, so a file already in the library, under any
name, is skipped. Polling, not file-system events: it works the same on every platform, on network
shares and on cards, and a scan of a card's few thousand names costs milliseconds.

Nothing here needs to survive a crash: the library is the record. A file whose path the library holds
is done; anything else is looked at again after a restart (a kill between registering a file and the
next scan loses nothing, and registering twice is impossible: one footage per content hash). What a
scan remembers only for as long as it runs is the files it refused or found to be duplicates, with the
size and time they had: such a file is tried again only once it changes.

A footage whose file has gone from a watched folder stays in the library with its memories; the scan
says so once (`WatchReport.missing`), and `Library.footage` marks it missing. A watched folder that is
not there (a card taken out) is said once, and watching it resumes when it is back.

`watch` is the loop the app's background task and `egodesk watch run` both run: a scan every
`watch_interval_s`, and indexing of whatever is unfinished in a thread beside it, through
`Library.process`, the library's one ingest entry point, so that files are registered while others are
being indexed.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sqlalchemy import select

from egodesk.core.paths import LibraryPaths
from egodesk.core.settings import Settings, SettingsError
from egodesk.core.types import Progress
from egodesk.media.probe import find_media
from egodesk.memory.store import Footage, Job, Store
from egodesk.pipeline.ingest import add_paths
from egodesk.pipeline.jobs import failure_text

log = logging.getLogger(__name__)

# (size in bytes, modification time in ns): a file that keeps both between two scans is not being written.
Stamp = tuple[int, int]
PAUSE_STEP_S = 0.1  # how soon a stop is noticed between scans
STOP_WAIT_S = 3.0  # how long a stop waits for indexing to reach a step's end


@dataclass
class WatchReport:
    """What one scan did. Empty when nothing new happened (most scans)."""

    added: list[tuple[str, int]] = field(default_factory=list)  # (path, new footage id)
    existing: list[tuple[str, int]] = field(default_factory=list)  # (path, footage id it duplicates)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    missing: list[tuple[str, int]] = field(default_factory=list)  # (path, footage id) whose file has gone
    folders_gone: list[str] = field(default_factory=list)  # watched folders not there (this time, not before)
    folders_back: list[str] = field(default_factory=list)  # watched folders there again

    def __bool__(self) -> bool:
        return any((self.added, self.existing, self.errors, self.missing, self.folders_gone, self.folders_back))

    def merge(self, other: WatchReport) -> None:
        for name in ("added", "existing", "errors", "missing", "folders_gone", "folders_back"):
            getattr(self, name).extend(getattr(other, name))

    def lines(self) -> list[str]:
        """One sentence per event, for the terminal and the window's activity list."""
        return (
            [f"imported {path}" for path, _ in self.added]
            + [f"skipped {path}: already in the library (footage {fid})" for path, fid in self.existing]
            + [f"error: {path}: {reason}" for path, reason in self.errors]
            + [f"missing: {path}: the file is gone; its footage and memories stay in the library" for path, _ in self.missing]
            + [
                f"watched folder not found: {folder} (unplugged or removed?); watching resumes when it is back"
                for folder in self.folders_gone
            ]
            + [f"watched folder back: {folder}" for folder in self.folders_back]
        )


class FolderWatch:
    """The scanning half of watching: which files of the watched folders are complete and new."""

    def __init__(self, store: Store, settings: Settings):
        self.store = store
        self.settings = settings
        self._previous: dict[Path, Stamp] = {}  # every candidate file of the last scan
        self._refused: dict[Path, Stamp] = {}  # files found duplicate or bad, as they were then
        self._missing: set[int] = set()  # footage already reported missing
        self._gone: set[str] = set()  # watched folders already reported not there

    @property
    def folders(self) -> list[Path]:
        return [Path(folder).expanduser() for folder in self.settings.watched_folders]

    def scan(self, tell: Callable[[WatchReport], None] = lambda r: None) -> WatchReport:
        """Look at every watched folder once; import the files that are complete and new. Each file's
        outcome is told as it comes (a large file takes a while to hash), the rest at the end; the whole
        scan's report is returned."""
        report, rest = WatchReport(), WatchReport()  # rest: the folders' and removed files' news
        current: dict[Path, Stamp] = {}
        present: list[Path] = []
        for folder in self.folders:
            if self._folder_there(folder, rest):
                present.append(folder.resolve())
                current.update(_stamps(find_media([folder])))
        held = self._held_paths()
        for path, stamp in current.items():
            if str(path) in held or self._refused.get(path) == stamp or self._previous.get(path) != stamp:
                continue  # in the library, refused as it is now, or new or changed since the last scan
            one = self._import(path, stamp)
            tell(one)
            report.merge(one)
        self._previous = current
        self._notice_missing(present, rest)
        if rest:
            tell(rest)
        report.merge(rest)
        return report

    def _folder_there(self, folder: Path, report: WatchReport) -> bool:
        there = folder.is_dir() and os.access(folder, os.R_OK | os.X_OK)
        if not there and str(folder) not in self._gone:
            self._gone.add(str(folder))
            report.folders_gone.append(str(folder))
        elif there and str(folder) in self._gone:
            self._gone.discard(str(folder))
            report.folders_back.append(str(folder))
        return there

    def _held_paths(self) -> set[str]:
        with self.store.session() as session:
            return set(session.scalars(select(Footage.path)))

    def _import(self, path: Path, stamp: Stamp) -> WatchReport:
        added = add_paths(self.store, self.settings, [path])
        if not added.added:
            self._refused[path] = stamp  # tried again only once the file changes
        return WatchReport(
            added=[(str(path), fid) for fid in added.added],
            existing=[(str(path), fid) for fid in added.existing],
            errors=added.errors,
        )

    def _notice_missing(self, folders: list[Path], report: WatchReport) -> None:
        """Footage whose file was in a watched folder that is there, and is not there any more."""
        with self.store.session() as session:
            rows = session.execute(select(Footage.id, Footage.path)).all()
        watched = [(fid, raw) for fid, raw in rows if any(Path(raw).is_relative_to(folder) for folder in folders)]
        gone = {fid: raw for fid, raw in watched if not Path(raw).exists()}
        report.missing += [(raw, fid) for fid, raw in gone.items() if fid not in self._missing]
        self._missing = set(gone)  # one that comes back and goes again is reported again


def _stamps(paths: list[Path]) -> dict[Path, Stamp]:
    """Size and modification time of each file that can be opened for reading now (resolved paths: the
    library stores those). A file that vanished or cannot be read yet is left out: it is looked at
    again next scan."""
    out: dict[Path, Stamp] = {}
    for path in paths:
        try:
            with open(path, "rb"):
                pass
            info = path.stat()
        except OSError:
            continue
        out[path.resolve()] = (info.st_size, info.st_mtime_ns)
    return out


def unfinished(store: Store) -> bool:
    """Some footage has a stage waiting to run (or left running by a process that died)."""
    with store.session() as session:
        return session.scalar(select(Job.id).where(Job.state.in_(("pending", "running"))).limit(1)) is not None


class WatchedLibrary(Protocol):
    """What watching needs of a library (`pipeline.library.Library`, which imports this module's users)."""

    store: Store
    settings: Settings
    paths: LibraryPaths

    def process(self, progress: Callable[[Progress], None], should_stop: Callable[[], bool]) -> dict[str, int]: ...


def watched_with(settings: Settings, library_root: Path, folder: str | os.PathLike) -> Settings:
    """`settings` with `folder` (made absolute) added to the watched folders. ValueError says why a folder
    cannot be watched: it is not a readable folder, or it holds or lies inside the library, whose
    thumbnails would come back as photos."""
    path = Path(folder).expanduser().absolute()
    if not path.is_dir():
        raise ValueError(f"{path}: {'not a folder' if path.exists() else 'no such folder'}")
    if not os.access(path, os.R_OK | os.X_OK):
        raise ValueError(f"{path}: permission denied")
    root = library_root.resolve()
    if path.resolve().is_relative_to(root) or root.is_relative_to(path.resolve()):
        raise ValueError(f"{path}: holds the library's own files (its thumbnails would be imported as photos)")
    if str(path) in settings.watched_folders:
        return settings
    return settings.model_copy(update={"watched_folders": [*settings.watched_folders, str(path)]})


def watched_without(settings: Settings, folder: str | os.PathLike) -> Settings:
    """`settings` without `folder` among the watched ones (ValueError when it is not one of them). Its
    footage stays in the library."""
    wanted = {str(Path(folder).expanduser().absolute()), str(folder)}
    kept = [f for f in settings.watched_folders if f not in wanted]
    if len(kept) == len(settings.watched_folders):
        raise ValueError(f"{folder}: not a watched folder (see `egodesk watch list`)")
    return settings.model_copy(update={"watched_folders": kept})


def watch(
    library: WatchedLibrary,
    progress: Callable[[Progress], None] = lambda p: None,
    on_report: Callable[[WatchReport], None] = lambda r: None,
    should_stop: Callable[[], bool] = lambda: False,
) -> None:
    """Scan the library's watched folders every `watch_interval_s` and index what is unfinished, until
    `should_stop()`. Settings changed meanwhile (folders added or removed, by the app's dialog or by
    `egodesk watch add`) take effect at the next scan."""
    scanner = FolderWatch(library.store, library.settings)
    stamp = _settings_stamp(library)
    ending = threading.Event()  # set however the loop ends (a stop, Ctrl-C): indexing then stops too

    def stop_indexing() -> bool:
        return ending.is_set() or should_stop()

    indexer: threading.Thread | None = None
    try:
        while not should_stop():
            if _settings_stamp(library) != stamp:
                stamp = _settings_stamp(library)
                _reload_settings(library, scanner)
            scanner.scan(tell=on_report)
            if (indexer is None or not indexer.is_alive()) and unfinished(library.store):
                indexer = threading.Thread(
                    target=_index, args=(library, progress, stop_indexing), name="egodesk-index", daemon=True
                )
                indexer.start()
            _pause(library.settings.watch_interval_s, should_stop)
    finally:
        ending.set()
        if indexer is not None:
            indexer.join(STOP_WAIT_S)  # it stops between two steps; one still in a model call ends with the process


def _reload_settings(library: WatchedLibrary, scanner: FolderWatch) -> None:
    """The settings file changed: watch what it says now (a file that does not load keeps the last settings)."""
    try:
        library.settings = scanner.settings = Settings.load(library.paths.settings_file)
    except SettingsError as exc:
        log.warning("the changed settings were not loaded: %s", exc)


def _index(library: WatchedLibrary, progress: Callable[[Progress], None], should_stop: Callable[[], bool]) -> None:
    """Index everything unfinished; a failure (a full disk, a locked database) is reported, and the next
    scan tries again."""
    try:
        library.process(progress, should_stop)
    except Exception as exc:  # the thread would end silently otherwise
        log.exception("indexing the watched folders' footage failed")
        progress(Progress("worker", 0, 0, None, f"indexing failed: {failure_text(exc)}"))


def _pause(seconds: float, should_stop: Callable[[], bool]) -> None:
    deadline = time.monotonic() + seconds
    while not should_stop() and time.monotonic() < deadline:
        time.sleep(min(PAUSE_STEP_S, max(0.0, deadline - time.monotonic())))


def _settings_stamp(library: WatchedLibrary) -> int:
    try:
        return library.paths.settings_file.stat().st_mtime_ns
    except OSError:
        return 0
