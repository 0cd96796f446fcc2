"""A footage file's identity: the same bytes are the same footage, whatever the file is called."""

from __future__ import annotations

import os
from pathlib import Path

from egodesk.core.manifest import sha256_of


def content_hash(path: str | os.PathLike) -> str:
    """sha256 of the whole file as hex, read in blocks."""
    return sha256_of(Path(path))
