"""The main window: library, search and starred moments (left), player and timeline (centre), ask and memory
(right), activity (bottom). It wires the views together, runs long work through the one task runner, reads the library
off the GUI thread (`Reads`), and remembers its layout in the library folder (so each library keeps its
own layout and question history) and where it was left, for the next start (`Reopen`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QIcon, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QMessageBox, QWidget

from egodesk import __version__
from egodesk.core.paths import choose_data_folder
from egodesk.core.settings import Settings
from egodesk.core.types import Evidence
from egodesk.gui import ops
from egodesk.gui.activity import ActivityModel, ActivityView
from egodesk.gui.ask_panel import AskPanel
from egodesk.gui.footage_view import FootageView
from egodesk.gui.formatting import fmt_clock
from egodesk.gui.help import AboutDialog, LogDialog, open_folder
from egodesk.gui.import_dialog import ImportDialog
from egodesk.gui.import_flow import ImportFlow
from egodesk.gui.kept import Keeping, KeptPanel
from egodesk.gui.library_panel import LibraryPanel
from egodesk.gui.memory_browser import MemoryBrowser
from egodesk.gui.model_manager import ModelManager
from egodesk.gui.people import PeopleActions, PeoplePanel
from egodesk.gui.reads import Reads
from egodesk.gui.reopen import RecentMenu, Reopen
from egodesk.gui.search_panel import SearchPanel
from egodesk.gui.selection import Selection
from egodesk.gui.settings_dialog import SettingsDialog
from egodesk.gui.tasks import Task, TaskRunner
from egodesk.gui.widgets import icon
from egodesk.retrieval.registry import strategy_names

if TYPE_CHECKING:
    from egodesk.pipeline.ingest import AddReport
    from egodesk.pipeline.library import Library
    from egodesk.pipeline.watch import WatchReport

log = logging.getLogger(__name__)

REFRESH_MS = 600


class MainWindow(QMainWindow):
    library_switch_requested = Signal(object)  # Path: the app opens a window on that library

    def __init__(self, library: Library | None = None, runner: TaskRunner | None = None):
        super().__init__()
        if library is None:
            from egodesk.pipeline.library import Library

            library = Library()
        self.library = library
        self.root = str(library.paths.root)
        self.layout_store = QSettings(str(Path(self.root) / "gui.ini"), QSettings.Format.IniFormat)
        self.runner = runner or TaskRunner(self)
        self.watch_task: Task | None = None
        self.setObjectName("main-window")
        self.setWindowTitle(f"egodesk {__version__} — {self.root}")
        self.resize(1360, 860)
        self.setAcceptDrops(True)

        self.reads = Reads(self)
        self.selection = Selection(self)
        self.memory = MemoryBrowser(self)
        self.view = FootageView(library, self.memory, self.reads, self.selection, self)
        self.player, self.timeline = self.view.player, self.view.timeline
        self.setCentralWidget(self.view)
        self.library_panel = LibraryPanel(self)
        self.search_panel = SearchPanel(library.search, self.reads, self)
        self.kept_panel = KeptPanel(self)
        self.people_panel = PeoplePanel(self)
        self.people = PeopleActions(self.runner, self.root, self)
        self.keeping = Keeping(self.runner, self.root, lambda: self.view.footage, self)
        self.ask_panel = AskPanel(self.runner, self.root, self.layout_store, self.selection, self.thumbnail_for, self)
        self.activity_model = ActivityModel(self.footage_title, self)
        self.activity = ActivityView(self.activity_model, self)
        self.reopen = Reopen(Path(self.root), self.view, self.library_panel, self._show_note)
        self.docks = {
            "library": self._dock("Library", self.library_panel, Qt.DockWidgetArea.LeftDockWidgetArea),
            "search": self._dock("Search", self.search_panel, Qt.DockWidgetArea.LeftDockWidgetArea),
            "starred": self._dock("Starred", self.kept_panel, Qt.DockWidgetArea.LeftDockWidgetArea),
            "people": self._dock("People", self.people_panel, Qt.DockWidgetArea.LeftDockWidgetArea),
            "ask": self._dock("Ask", self.ask_panel, Qt.DockWidgetArea.RightDockWidgetArea),
            "memory": self._dock("Memory", self.memory, Qt.DockWidgetArea.RightDockWidgetArea),
            "activity": self._dock("Activity", self.activity, Qt.DockWidgetArea.BottomDockWidgetArea),
        }
        self.docks["activity"].hide()
        self.tabifyDockWidget(self.docks["starred"], self.docks["people"])  # two short lists share a place
        self.docks["starred"].raise_()
        self.imports = ImportFlow(
            self,
            self.runner,
            library,
            self.activity_model,
            self.docks["activity"],
            lambda: self.view.footage,
            self.refresh_library,
        )
        self.imports.show_in(self.activity)
        self._build_menus()
        self.player.install_shortcuts(self)
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_MS)
        self._refresh_timer.timeout.connect(self.refresh_library)

        self.library_panel.open_requested.connect(lambda fid: self.view.open_footage(fid))
        self.library_panel.forget_requested.connect(lambda fid: self.forget(fid))
        self.library_panel.import_files_requested.connect(self.imports.choose_files)
        self.library_panel.import_folder_requested.connect(self.imports.choose_folder)
        self.timeline.forget_requested.connect(self.forget)
        self.search_panel.hits_shown.connect(self.view.mark_search)
        self.search_panel.hit_picked.connect(self.view.play_hit)
        for view in (self.ask_panel, self.timeline, self.search_panel, self.kept_panel):
            view.keep_requested.connect(self.keeping.request)
        self.kept_panel.picked.connect(lambda k: self.view.play_moment(k.footage_id, k.start, k.end))
        self.kept_panel.unstar_requested.connect(self.keeping.unstar)
        self.kept_panel.edit_requested.connect(self.keeping.edit)
        self.kept_panel.delete_requested.connect(self.keeping.delete_note)
        self.keeping.message.connect(self._show_note)
        self.people_panel.play_requested.connect(self.view.play_moment)
        self.people_panel.claim_requested.connect(self.people.claim)
        self.people_panel.name_requested.connect(self.people.ask_name)
        self.people_panel.merge_requested.connect(self.people.confirm_merge)
        self.people_panel.split_requested.connect(self.people.split)
        self.people_panel.forget_requested.connect(self.people.confirm_forget)
        self.people_panel.faces.name_requested.connect(self.people.ask_face_name)
        self.people_panel.faces.merge_requested.connect(self.people.confirm_face_merge)
        self.people_panel.faces.forget_requested.connect(self.people.confirm_face_forget)
        self.people.message.connect(self._show_note)
        self.memory.correct_requested.connect(self.correct_line)
        self.memory.undo_requested.connect(self.undo_correction)
        self.memory.said_requested.connect(self.people.said_by)
        focus_search = QAction(self)
        focus_search.setShortcut(QKeySequence.StandardKey.Find)
        focus_search.triggered.connect(lambda: (self.docks["search"].show(), self.search_panel.field.setFocus()))
        self.addAction(focus_search)
        self.selection.picked.connect(self._select_picked_footage)
        self.runner.changed.connect(self._library_changed)
        self.view.message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self._restore_layout()
        self.refresh_library(then=self.reopen.restore)
        self.refresh_kept()
        self.refresh_people()
        self.watch_folders()

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower()}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_menus(self) -> None:
        bar = self.menuBar()
        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("toolbar-main")
        file_menu = bar.addMenu("&File")
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        actions = [
            ("Import files…", "import", QKeySequence.StandardKey.Open, self.imports.choose_files),
            ("Import folder…", "folder", None, self.imports.choose_folder),
            ("Import dialog…", "", QKeySequence("Ctrl+I"), self.open_import_dialog),
            None,
            RecentMenu(Path(self.root), self.change_data_folder, self._show_note, self),
            None,
            ("Settings…", "settings", QKeySequence.StandardKey.Preferences, self.open_settings),
            ("Models…", "models", None, self.open_models),
            None,
            ("Quit", "", QKeySequence.StandardKey.Quit, self.close),
        ]
        for entry in actions:
            if entry is None:
                file_menu.addSeparator()
                continue
            if isinstance(entry, QMenu):
                file_menu.addMenu(entry)
                continue
            text, icon_name, key, slot = entry
            action = QAction(icon(icon_name) if icon_name else QIcon(), text, self)
            if key is not None:
                action.setShortcut(key)
            action.triggered.connect(slot)
            file_menu.addAction(action)
            if icon_name:
                toolbar.addAction(action)
        view_menu = bar.addMenu("&View")
        for dock in self.docks.values():
            view_menu.addAction(dock.toggleViewAction())
        help_menu = bar.addMenu("&Help")
        help_menu.addAction("Show logs", lambda: LogDialog(self.library.paths.log_file, self).open())
        help_menu.addAction("Open data folder", lambda: open_folder(self.library.paths.root))
        help_menu.addAction("About egodesk", lambda: AboutDialog(self).open())

    # -- library -----------------------------------------------------------------------------------

    def refresh_library(self, then: Callable[[], None] | None = None) -> None:
        """Read the footage list (off the GUI thread), show it, then call `then`."""
        self.reads.read("footage", self.library.footage, lambda footage: self._show_library(footage, then), self._library_unread)

    def _show_library(self, footage: list, then: Callable[[], None] | None) -> None:
        self.library_panel.set_footage(footage)
        self.view.set_footage(footage)
        self.imports.update_activity()
        if then is not None:
            then()

    def _library_unread(self, exc: Exception) -> None:
        self.statusBar().showMessage(f"Could not read the library: {exc}", 8000)

    def _library_changed(self, what: frozenset[str]) -> None:
        if ops.FOOTAGE in what:
            self.schedule_refresh()
        if ops.KEPT in what or ops.FOOTAGE in what:  # forgetting a footage forgets its stars and notes
            self.refresh_kept()
        if ops.PEOPLE in what or ops.FOOTAGE in what:  # an import finds voices; forgetting a footage drops some
            self.refresh_people()

    def correct_line(self, footage_id: int, at: float, text: str) -> Task:
        """Store a person's correction of the line at `at` (`Library.correct_line`, run warm: `ops.correct`)."""
        return self._correct("correct_line", footage_id, at, text, done="Line corrected", failed="Line not corrected")

    def undo_correction(self, footage_id: int, at: float) -> Task:
        return self._correct("undo_correction", footage_id, at, done="Correction undone", failed="Nothing undone")

    def _correct(self, action: str, *args: Any, done: str, failed: str) -> Task:
        return self.runner.run(
            ops.correct,
            self.root,
            action,
            *args,
            label="Correct",
            warm=True,
            on_success=lambda line: self._show_note(f"{done}: “{line.text}” (searchable and used to answer now)."),
            on_failure=lambda message: self._show_note(f"{failed}: {message}"),
        )

    def refresh_people(self) -> None:
        """Read the voices and a few turns of each, and the faces with their pictures (off the GUI thread),
        into the People panel (and the voices into the Memory panel's "Said by…")."""
        library = self.library
        self.reads.read(
            "people",
            lambda: (library.voices(), library.voice_samples(), library.faces(), library.face_pictures()),
            lambda found: (self.people_panel.set_people(*found), self.memory.set_voices(found[0])),
            lambda exc: self._show_note(f"Could not read the voices: {exc}"),
        )

    def refresh_kept(self) -> None:
        """Read the starred moments and notes (off the GUI thread) into the Starred list."""
        self.reads.read(
            "kept",
            self.library.kept,
            self.kept_panel.set_kept,
            lambda exc: self._show_note(f"Could not read the starred moments: {exc}"),
        )

    def schedule_refresh(self) -> None:
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def footage_title(self, footage_id: int) -> str:
        footage = self.view.footage.get(footage_id)
        if footage is None:  # new since the last read: its title shows once the list is read again
            self.schedule_refresh()
            return f"footage {footage_id}"
        return footage.title

    def thumbnail_for(self, evidence: Evidence) -> Path | None:
        """The evidence's keyframe, else its footage's thumbnail."""
        if evidence.keyframe:
            return Path(evidence.keyframe)
        footage = self.view.footage.get(evidence.footage_id)
        return footage.thumbnail if footage else None

    # -- import (`ImportFlow`) ---------------------------------------------------------------------

    @property
    def import_task(self) -> Task | None:
        """The import running, if any (one at a time; what is asked meanwhile waits for it)."""
        return self.imports.task

    @import_task.setter
    def import_task(self, task: Task | None) -> None:
        self.imports.task = task

    def open_import_dialog(self) -> ImportDialog:
        return self.imports.open_dialog()

    def import_paths(self, paths: list[Path | str], resume: bool = False) -> Task | None:
        """Import files and folders (`ImportFlow.import_paths`)."""
        return self.imports.import_paths(paths, resume)

    def resume_import(self) -> Task | None:
        return self.imports.resume()

    def cancel_import(self) -> None:
        self.imports.cancel()

    def open_files(self, paths: list[Path | str]) -> Task | None:
        """Import the files the app was started with (a video the desktop opened it with, `egodesk FILE`)
        and show the first as soon as its import registers it: it plays while its indexing goes on in
        Activity. The import runs on its own, after the one running if any, so that the footage it
        registers is these files'. Files given are shown instead of the place the window was left at."""
        self.reopen.pending = False
        if self.import_task is not None and self.import_task.running:
            self.import_task.finished.connect(lambda: self.open_files(paths))
            return self.import_task
        task = self.import_paths(paths)
        if task is not None:
            task.partial.connect(self._show_registered)
        return task

    def _show_registered(self, report: AddReport) -> None:
        footage = report.added + report.existing
        if not footage:
            reasons = "; ".join(f"{Path(p).name}: {why}" for p, why in report.errors) or "nothing to import in it"
            self._show_note(f"Nothing to show: {reasons}.")
            return
        self.refresh_library(then=lambda: self._show_footage(footage[0]))

    def _show_footage(self, footage_id: int) -> None:
        if self.view.open_footage(footage_id):
            self.library_panel.select(footage_id)

    def _show_note(self, text: str) -> None:
        """A message that needs reading (something asked for is not there): longer in the status bar."""
        self.statusBar().showMessage(text, 15000)

    # -- watched folders ---------------------------------------------------------------------------

    def watch_folders(self) -> Task | None:
        """While the window is open, one background task watches the library's watched folders (started
        when there are some). Folders added or removed later reach it through the settings file."""
        if not self.library.settings.watched_folders or (self.watch_task is not None and self.watch_task.running):
            return self.watch_task
        self.watch_task = self.runner.run(
            ops.watch_folders,
            self.root,
            label="Watch",
            on_progress=self.activity_model.on_progress,
            on_partial=self._watched,
            on_failure=lambda message: self._show_note(f"Watching the folders stopped: {message}"),
        )
        return self.watch_task

    def _watched(self, report: WatchReport) -> None:
        """News from the watched folders: problems to Activity, a word in the status bar."""
        problems = list(report.errors) + [(path, "the file is gone; its memories are kept") for path, _ in report.missing]
        problems += [(folder, "watched folder not found (unplugged or removed?)") for folder in report.folders_gone]
        self.activity_model.add_problems(problems)
        if report.added:
            names = ", ".join(Path(path).name for path, _ in report.added[:3]) + ("…" if len(report.added) > 3 else "")
            self.statusBar().showMessage(f"From the watched folders: {names}", 6000)
        elif problems:
            self._show_note("; ".join(line for line in report.lines() if not line.startswith("skipped")))

    # -- dropping files ----------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.import_paths(paths)

    # -- answers, evidence, forgetting -------------------------------------------------------------

    def _select_picked_footage(self) -> None:
        evidence = self.selection.picked_evidence
        if evidence is not None and evidence.footage_id in self.view.footage:
            self.library_panel.select(evidence.footage_id)

    def forget(self, footage_id: int, start: float | None = None, end: float | None = None, confirm: bool = True) -> Task | None:
        title = self.footage_title(footage_id)
        what = f"the moment {fmt_clock(start)}–{fmt_clock(end)} of “{title}”" if start is not None else f"all of “{title}”"
        if (
            confirm
            and QMessageBox.question(
                self,
                "Forget",
                f"Forget {what}? Its memories are deleted from this library; the video file itself is not touched.",
            )
            != QMessageBox.StandardButton.Yes
        ):
            return None
        return self.runner.run(
            ops.forget,
            self.root,
            footage_id,
            start,
            end,
            label="Forget",
            on_success=lambda _r: self.statusBar().showMessage(f"Forgot {what}.", 6000),
            on_failure=lambda m: self.statusBar().showMessage(f"Could not forget {what}: {m}", 10000),
        )

    # -- dialogs -----------------------------------------------------------------------------------

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(
            self.library.settings, self, choices={"strategy": strategy_names()}, data_folder=self.library.paths.root
        )
        dialog.accepted.connect(lambda: self._settings_accepted(dialog))
        dialog.open()
        return dialog

    def _settings_accepted(self, dialog: SettingsDialog) -> None:
        self.save_settings(dialog.result_settings)
        if dialog.result_data_folder is not None:
            self.change_data_folder(dialog.result_data_folder)

    def change_data_folder(self, folder: Path) -> None:
        """Remember the folder as the library to open, then ask the app to switch to it (this library's
        files stay where they are)."""
        try:
            root = choose_data_folder(folder)
        except OSError as exc:
            QMessageBox.warning(self, "Data folder", f"The library cannot live in {folder}:\n\n{exc.strerror or exc}")
            return
        log.info("switching the library to %s", root)
        self.library_switch_requested.emit(root)

    def open_models(self) -> ModelManager:
        dialog = ModelManager(self.runner, self.library.settings, self.library.paths.user_models, self)
        dialog.settings_changed.connect(self.save_settings)
        dialog.open()
        return dialog

    def save_settings(self, settings: Settings) -> None:
        try:
            self.library.save_settings(settings)
        except OSError as exc:
            QMessageBox.warning(self, "Settings", f"Could not save the settings: {exc}")
            return
        self.statusBar().showMessage("Settings saved.", 4000)
        self.watch_folders()

    # -- layout and closing ------------------------------------------------------------------------

    def _restore_layout(self) -> None:
        geometry = self.layout_store.value("window/geometry")
        state = self.layout_store.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is None or not self.restoreState(state):
            QTimer.singleShot(0, self._default_layout)  # once the window has its size

    def _default_layout(self) -> None:
        self.resizeDocks([self.docks["library"], self.docks["ask"]], [340, 440], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["ask"], self.docks["memory"]], [560, 300], Qt.Orientation.Vertical)

    def save_layout(self) -> None:
        self.layout_store.setValue("window/geometry", self.saveGeometry())
        self.layout_store.setValue("window/state", self.saveState())
        self.layout_store.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.runner.cancel_all()  # end the workers without waiting on them
        self._refresh_timer.stop()
        self.reads.close()
        self.reopen.record()  # before the player lets its file go
        self.player.retire()  # the engine's threads end now, not in a destructor holding the GIL
        self.save_layout()
        event.accept()
