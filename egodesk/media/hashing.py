"""A footage file's identity: the same bytes are the same footage, whatever the file is called."""

from __future__ import annotations

import hashlib
import os

BLOCK_BYTES = 1 << 20  # 1 MiB: large reads for speed, flat memory for files of any size


def content_hash(path: str | os.PathLike) -> str:
    """sha256 of the whole file as hex, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK_BYTES):
            digest.update(block)
    return digest.hexdigest()
