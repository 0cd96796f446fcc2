"""Where the app was left: the libraries opened lately and, per library, the footage on show and the
position in it, so that the next start (and File > Open Recent) comes back to it.

It is the app's, not a library's: a small JSON file beside the data-folder pointer in the per-user
config folder (`paths.app_state_file`). Which library opens at start stays the pointer's to say
(`paths.chosen_data_folder`); this file adds what the pointer cannot hold. Every change reads the file
again and writes it whole (to a temporary name, then renamed), so two windows, or two running copies of
the app, each add their own change to the other's rather than undo it, and a crash leaves the old file.
A file that cannot be read (damaged, from a newer version) is started afresh: losing where the app was
left must never keep it from starting.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from egodesk.core.paths import HOME_ENV, LibraryPaths, app_state_file, chosen_data_folder

log = logging.getLogger(__name__)

MAX_RECENT = 8  # File > Open Recent lists at most this many libraries (the current one included)
STATE_VERSION = 1


@dataclass(frozen=True)
class Place:
    """The footage on show in a library's window when it closed, and the position in it (seconds into
    the file). The title names the footage in a message when it is gone."""

    footage_id: int
    title: str
    position: float


def is_library(root: str | os.PathLike) -> bool:
    """A library is there while its folder is: one without its database yet is a library about to be
    made (a data folder just chosen), while a folder that is gone would only be made again, empty."""
    return Path(root).is_dir()


class AppState:
    def __init__(self, file: Path | None = None):
        self.file = file or app_state_file()

    def recent(self) -> list[Path]:
        """The libraries opened lately, newest first, that are still there: one deleted, or on a drive
        not connected now, is left out, and dropped for good when a library is next opened."""
        return [Path(root) for root in self._read()["recent"] if is_library(root)]

    def opened(self, root: Path) -> None:
        """`root` was opened: it heads the recent list, which keeps at most MAX_RECENT libraries that are
        still there; the places of libraries that fall off it are dropped with them."""
        state = self._read()
        key = str(root)
        state["recent"] = [key] + [r for r in state["recent"] if r != key and is_library(r)][: MAX_RECENT - 1]
        state["places"] = {r: place for r, place in state["places"].items() if r in state["recent"]}
        self._write(state)

    def place(self, root: Path) -> Place | None:
        """Where `root`'s window was left, if a footage was on show."""
        stored = self._read()["places"].get(str(root))
        try:
            return Place(int(stored["footage_id"]), str(stored["title"]), float(stored["position"])) if stored else None
        except (KeyError, TypeError, ValueError):
            return None

    def leave(self, root: Path, place: Place | None) -> None:
        """Remember where `root`'s window is left (None: no footage on show, so none reopens)."""
        state = self._read()
        if place is None:
            state["places"].pop(str(root), None)
        else:
            state["places"][str(root)] = asdict(place)
        self._write(state)

    def _read(self) -> dict[str, Any]:
        try:
            state = json.loads(self.file.read_text(encoding="utf-8"))
            if state.get("version") == STATE_VERSION and isinstance(state["recent"], list) and isinstance(state["places"], dict):
                return state
            log.warning("%s is of another version or damaged: the recent libraries and places start afresh", self.file)
        except (FileNotFoundError, NotADirectoryError):
            pass
        except (OSError, ValueError, KeyError, AttributeError) as exc:
            log.warning("cannot read %s (%s): the recent libraries and places start afresh", self.file, exc)
        return {"version": STATE_VERSION, "recent": [], "places": {}}

    def _write(self, state: dict[str, Any]) -> None:
        """Write the whole state under a temporary name, then rename it (atomic). A config folder that
        cannot be written costs only the memory of this change: the window works on."""
        partial = self.file.with_suffix(".partial")
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps(state, indent=1) + "\n", encoding="utf-8")
            partial.replace(self.file)
        except OSError as exc:
            log.warning("cannot save %s (%s): where the app was left is not remembered", self.file, exc)


def start_library(state: AppState | None = None) -> tuple[LibraryPaths, str]:
    """The library the app opens at start, and a note for the user when it is not the one asked for.

    EGODESK_HOME (`--library DIR`) names one; else the last one used (the data folder chosen in Settings or
    opened from Open Recent); else the platform's default. A last library that is gone (deleted, or on a
    drive not connected) is not made again, empty, in its place: the most recent library still there opens
    instead (else the default), and the note says so. The choice itself is kept, so the library opens
    again once its drive is back."""
    chosen = chosen_data_folder()
    if os.environ.get(HOME_ENV) or chosen is None or is_library(chosen):
        return LibraryPaths.default(), ""
    instead = next(iter((state or AppState()).recent()), None)
    paths = LibraryPaths.at(instead) if instead is not None else LibraryPaths.platform()
    note = (
        f"The library you last used, {chosen}, is not there any more (deleted, or on a drive that is not connected); "
        f"opened {paths.root} instead."
    )
    return paths, note
