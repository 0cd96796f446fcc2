"""Importing from the window: the file and folder choosers (the import dialog's), the import dialog, and
the one import task at a time (`ops.import_paths` in a worker process), with what is asked while it runs
queued behind it. Its progress and problems go to the activity model that the Activity dock and every
open import dialog show; cancel and resume come back from any of them."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow

from egodesk.gui import ops
from egodesk.gui.activity import ActivityModel, ActivityView
from egodesk.gui.import_dialog import ImportDialog, ask_files, ask_folder
from egodesk.gui.tasks import Task, TaskRunner

if TYPE_CHECKING:
    from egodesk.pipeline.ingest import AddReport
    from egodesk.pipeline.library import Library

log = logging.getLogger(__name__)

UNFINISHED = ("pending", "indexing", "failed", "cancelled")


class ImportFlow(QObject):
    def __init__(
        self,
        window: QMainWindow,
        runner: TaskRunner,
        library: Library,
        model: ActivityModel,
        dock: QDockWidget,
        footage: Callable[[], dict[int, Any]],
        refresh_library: Callable[..., None],
    ):
        """`dock` holds the window's Activity view (shown when an import starts); `footage` is the footage
        the window shows, by id (their states say what is unfinished); `refresh_library(then=…)` reads the
        footage list again."""
        super().__init__(window)
        self.window = window
        self.runner = runner
        self.library = library
        self.root = str(library.paths.root)
        self.model = model
        self.dock = dock
        self.footage = footage
        self.refresh_library = refresh_library
        self.task: Task | None = None
        self.views: list[ActivityView] = []
        self._queued: list[Path] = []

    def show_in(self, view: ActivityView) -> None:
        """Show the import's state in `view` and take its cancel and resume requests."""
        view.cancel_requested.connect(self.cancel)
        view.resume_requested.connect(self.resume)
        self.views.append(view)

    def choose_files(self) -> None:
        self._import_chosen(ask_files(self.window))

    def choose_folder(self) -> None:
        self._import_chosen(ask_folder(self.window))

    def _import_chosen(self, paths: list[Path]) -> None:
        if paths:
            self.import_paths(paths)

    def open_dialog(self) -> ImportDialog:
        dialog = ImportDialog(self.model, self.import_paths, self.window)
        self.show_in(dialog.activity)
        dialog.finished.connect(lambda _r: self.views.remove(dialog.activity))
        self.update_activity()
        dialog.open()
        return dialog

    def import_paths(self, paths: list[Path | str], resume: bool = False) -> Task | None:
        """Import files and folders (indexing them in a worker process). Paths that do not exist or
        cannot be read are reported at once, with the reason; the rest are imported."""
        wanted = [Path(p).expanduser() for p in paths]
        problems, usable = [], []
        for path in wanted:
            if not path.exists():
                problems.append((str(path), "no such file or folder"))
            elif not os.access(path, os.R_OK):
                problems.append((str(path), "permission denied"))
            else:
                usable.append(path)
        self.model.add_problems(problems)
        self._show_activity()
        if wanted and not usable:
            self._status("Nothing to import: " + "; ".join(f"{p}: {r}" for p, r in problems), 10000)
            return None
        if self.task is not None and self.task.running:
            self._queued += usable
            self._status(f"{len(usable)} more item(s) will be imported after the current import.", 6000)
            return self.task
        self.task = self.runner.run(
            ops.import_paths,
            self.root,
            [str(p) for p in usable],
            resume,
            label="Import",
            on_progress=self.model.on_progress,
            on_partial=self._added,
            on_success=self._done,
            on_failure=self._failed,
            on_cancel=self._cancelled,
        )
        self.task.finished.connect(self._finished)
        self.update_activity()
        return self.task

    def resume(self) -> Task | None:
        return self.import_paths([], resume=True)

    def cancel(self) -> None:
        self._queued = []
        if self.task is not None:
            self.task.cancel()

    def update_activity(self) -> None:
        running = self.task is not None and self.task.running
        unfinished = sum(1 for f in self.footage().values() if f.state in UNFINISHED)
        for view in self.views:
            view.set_state(running, unfinished)

    def _status(self, text: str, ms: int) -> None:
        self.window.statusBar().showMessage(text, ms)

    def _show_activity(self) -> None:
        if self.dock.isHidden():
            self.dock.show()
            self.window.resizeDocks([self.dock], [190], Qt.Orientation.Vertical)

    def _added(self, report: AddReport) -> None:
        """The files are registered: per-file errors and skipped lines of text tracks ("file:line:
        reason") are problems to show now; the new footage appears in the library, waiting."""
        skipped = [tuple(note.split(": ", 1)) if ": " in note else (note, "skipped") for note in report.notes]
        self.model.add_problems(list(report.errors) + skipped)

    def _done(self, _outcome: dict) -> None:
        self.refresh_library(then=self._report)

    def _report(self) -> None:
        failed = sum(1 for f in self.footage().values() if f.state == "failed")
        self._status(f"Import finished; {failed} footage failed to index (see Activity)." if failed else "Import finished.", 8000)

    def _failed(self, message: str) -> None:
        self.model.add_problems([("import", message)])
        self._status(f"Import failed: {message}", 10000)

    def _cancelled(self, _message: str) -> None:
        try:
            self.library.mark_cancelled()  # stages the ended worker left 'running' become resumable
        except Exception:  # the next worker recovers them anyway
            log.info("marking cancelled jobs failed", exc_info=True)
        self._status("Import cancelled: finished stages are kept; Resume continues.", 8000)

    def _finished(self) -> None:
        self.task = None
        if self._queued:
            queued, self._queued = self._queued, []
            self.import_paths(queued)
