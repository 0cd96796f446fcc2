"""Where egodesk keeps things.

A *library* is one folder holding the database, thumbnails, index files, logs, settings and the user's
own models. Which folder: `EGODESK_HOME` (or `--library DIR`) if set, else the data folder the user chose
in Settings or last opened from File > Open Recent (remembered in a one-line file in the per-user config
folder, since the library's own settings live inside the library), else the platform's user data folder.
Every other folder follows it. The bundled default models belong to the installation, not to a library:
they live under the Python environment's prefix, or in the installed app's own folder (`EGODESK_MODELS`
overrides), so a scratch library still finds them.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "egodesk"
HOME_ENV = "EGODESK_HOME"
MODELS_ENV = "EGODESK_MODELS"
DATA_FOLDER_FILE = "data-folder"
APP_STATE_FILE = "state.json"


@dataclass(frozen=True)
class LibraryPaths:
    """Every folder and file of one library, derived from its root folder."""

    root: Path
    cache: Path
    logs: Path

    @classmethod
    def at(cls, root: str | os.PathLike) -> LibraryPaths:
        root = Path(root).expanduser().resolve()
        return cls(root=root, cache=root / "cache", logs=root / "logs")

    @classmethod
    def default(cls) -> LibraryPaths:
        """The library named by EGODESK_HOME, else the chosen data folder, else the platform's folders."""
        home = os.environ.get(HOME_ENV) or chosen_data_folder()
        if home:
            return cls.at(home)
        return cls.platform()

    @classmethod
    def platform(cls) -> LibraryPaths:
        """The platform's folders: the library of a user who never chose one."""
        return cls(
            root=platformdirs.user_data_path(APP_NAME),
            cache=platformdirs.user_cache_path(APP_NAME),
            logs=platformdirs.user_log_path(APP_NAME),
        )

    @property
    def database(self) -> Path:
        return self.root / "library.sqlite"

    @property
    def settings_file(self) -> Path:
        return self.root / "settings.json"

    @property
    def thumbnails(self) -> Path:
        return self.root / "thumbnails"

    @property
    def indices(self) -> Path:
        return self.root / "indices"

    @property
    def user_models(self) -> Path:
        """Models the user added (a GGUF, an mmproj); searched before the bundled ones."""
        return self.root / "models"

    @property
    def log_file(self) -> Path:
        return self.logs / "egodesk.log"

    def ensure(self) -> LibraryPaths:
        for folder in (self.root, self.cache, self.logs, self.thumbnails, self.indices, self.user_models):
            folder.mkdir(parents=True, exist_ok=True)
        return self


def data_folder_file() -> Path:
    return platformdirs.user_config_path(APP_NAME) / DATA_FOLDER_FILE


def app_state_file() -> Path:
    """What the app remembers between runs (recent libraries, where each was left: `core.appstate`)."""
    return platformdirs.user_config_path(APP_NAME) / APP_STATE_FILE


def chosen_data_folder() -> Path | None:
    """The data folder chosen in Settings or opened from File > Open Recent, if any."""
    try:
        text = data_folder_file().read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return Path(text) if text else None


def choose_data_folder(folder: str | os.PathLike) -> Path:
    """Make `folder` the library opened from now on (when EGODESK_HOME is not set). Creates its folders
    and checks it is writable first, so a bad choice fails here with an OSError, not at next start."""
    paths = LibraryPaths.at(folder).ensure()
    probe = paths.root / ".write-test"
    probe.write_bytes(b"")
    probe.unlink()
    pointer = data_folder_file()
    pointer.parent.mkdir(parents=True, exist_ok=True)
    partial = pointer.with_suffix(".partial")
    partial.write_text(str(paths.root) + "\n", encoding="utf-8")
    partial.replace(pointer)  # atomic: a crash leaves the old choice, never half a path
    return paths.root


def frozen_app_dir() -> Path | None:
    """The folder of the installed, frozen app (`/opt/egodesk` from the Debian package), or None when
    egodesk runs from a Python environment. PyInstaller sets `sys.frozen`."""
    if not getattr(sys, "frozen", False):
        return None
    return Path(sys.executable).resolve().parent


def bundled_models_dir() -> Path:
    """The default models, part of the installation: where `./setup.sh` assembles them in the Python
    environment, or `models/` beside the installed app's executable (`/opt/egodesk/models`, which the
    egodesk-models package fills; relative to the executable, so an unpacked copy finds its own)."""
    override = os.environ.get(MODELS_ENV)
    if override:
        return Path(override).expanduser().resolve()
    app = frozen_app_dir()
    if app is not None:
        return app / "models"
    return Path(sys.prefix) / "share" / APP_NAME / "models"


def project_root() -> Path:
    """The source tree holding `models/` and `resources/` next to the package (in the frozen app, the
    folder its build put them in beside the package)."""
    return Path(__file__).resolve().parents[2]


def resources_dir() -> Path:
    return project_root() / "resources"
