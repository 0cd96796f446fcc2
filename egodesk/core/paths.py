"""Where egodesk keeps things.

A *library* is one folder holding the database, thumbnails, index files, logs, settings and the user's
own models. By default it is the platform's user data folder; `EGODESK_HOME` (or `--library DIR`)
points it elsewhere, and then every other folder follows it. The bundled default models belong to the
installation, not to a library: they live under the Python environment's prefix (`EGODESK_MODELS`
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


@dataclass(frozen=True)
class LibraryPaths:
    """Every folder and file of one library, derived from its root folder."""

    root: Path
    cache: Path
    logs: Path

    @classmethod
    def at(cls, root: str | os.PathLike) -> "LibraryPaths":
        root = Path(root).expanduser().resolve()
        return cls(root=root, cache=root / "cache", logs=root / "logs")

    @classmethod
    def default(cls) -> "LibraryPaths":
        """The library named by EGODESK_HOME, else the platform's per-user folders."""
        home = os.environ.get(HOME_ENV)
        if home:
            return cls.at(home)
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

    def ensure(self) -> "LibraryPaths":
        for folder in (self.root, self.cache, self.logs, self.thumbnails, self.indices, self.user_models):
            folder.mkdir(parents=True, exist_ok=True)
        return self


def bundled_models_dir() -> Path:
    """Where `./setup.sh` assembles the manifest's models: part of the installation."""
    override = os.environ.get(MODELS_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return Path(sys.prefix) / "share" / APP_NAME / "models"


def project_root() -> Path:
    """The source tree holding `models/` and `resources/` next to the package."""
    return Path(__file__).resolve().parents[2]


def resources_dir() -> Path:
    return project_root() / "resources"
