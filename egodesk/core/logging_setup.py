"""Logging to a rotating file in the library's log folder (Help -> Show logs opens it)."""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler

from egodesk.core.paths import LibraryPaths

FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


def setup_logging(paths: LibraryPaths, level: int = logging.INFO) -> None:
    """Log to the library's own file (the GUI can switch libraries: the log follows the open one)."""
    paths.logs.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, RotatingFileHandler)]:
        if old.baseFilename == str(paths.log_file):
            return
        root.removeHandler(old)
        old.close()
    handler = RotatingFileHandler(paths.log_file, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(handler)
    root.setLevel(level)
