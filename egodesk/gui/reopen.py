"""Start where it was left: the footage and position a library's window reopens at, and File > Open
Recent. What is remembered, and where, is `core.appstate`'s; this module reads it from the views and
puts it back into them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QMenu, QWidget

from egodesk.core.appstate import AppState, Place, is_library
from egodesk.gui.footage_view import FootageView
from egodesk.gui.library_panel import LibraryPanel


class Reopen:
    """The place (footage, position) of one library's window: recorded when the window closes, shown
    again once the next window on that library has read its footage list. Opening the window counts
    as opening the library (it heads File > Open Recent)."""

    def __init__(self, root: Path, view: FootageView, panel: LibraryPanel, message: Callable[[str], None]):
        self.root, self.view, self.panel, self.message = root, view, panel, message
        self.state = AppState()
        self.pending = True  # until restored, or until something else is shown first (a file to open)
        self.state.opened(root)

    def restore(self) -> None:
        """Show the footage left on show, at its position (the player seeks once the video is loaded). A
        footage forgotten since is named in a message; one whose file is gone shows why in the player."""
        if not self.pending:
            return
        self.pending = False
        place = self.state.place(self.root)
        if place is None:
            return
        if place.footage_id not in self.view.footage:
            self.message(f"“{place.title}”, the footage you last had open, is no longer in this library.")
            return
        self.view.open_footage(place.footage_id, at=place.position)
        self.panel.select(place.footage_id)

    def record(self) -> None:
        """Remember the footage on show and the position in it: the start of the frame on screen, which
        reopens on that same frame (a position read mid-frame would creep on by half a frame each time)."""
        footage = self.view.current
        if footage is None:
            self.state.leave(self.root, None)
            return
        player, playhead = self.view.player, self.view.timeline.playhead
        position = player.shown_position() if player.path == Path(footage.path) else None
        if position is None:  # text-only, a missing file: the playhead says where
            position = playhead - footage.start if playhead is not None else 0.0
        self.state.leave(self.root, Place(footage.id, footage.title, max(0.0, position)))


class RecentMenu(QMenu):
    """File > Open Recent: the other libraries opened lately that are still there, newest first, read
    each time the menu opens (another window may have opened one since)."""

    def __init__(self, root: Path, open_library: Callable[[Path], None], message: Callable[[str], None], parent: QWidget):
        super().__init__("Open &Recent", parent)
        self.setObjectName("menu-recent")
        self.root, self.open_library, self.message = root, open_library, message
        self.aboutToShow.connect(self.fill)

    def fill(self) -> None:
        self.clear()
        others = [root for root in AppState().recent() if root != self.root]
        for number, root in enumerate(others, start=1):
            action = self.addAction(f"&{number} {_shown(root).replace('&', '&&')}", lambda root=root: self.choose(root))
            action.setToolTip(str(root))
        if not others:
            self.addAction("No other library opened yet").setEnabled(False)

    def choose(self, root: Path) -> None:
        """Open `root`, unless it went away since the menu was filled: a message then, not an empty
        library made in its place."""
        if not is_library(root):
            self.message(f"The library {root} is not there any more (deleted, or on a drive that is not connected).")
            return
        self.open_library(root)


def _shown(root: Path) -> str:
    """A library's folder as a person reads it: under their home folder, from ~."""
    home = Path.home()
    return f"~/{root.relative_to(home)}" if root.is_relative_to(home) and root != home else str(root)
