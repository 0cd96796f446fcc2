"""One index's files on disk and the checks that decide whether they can be trusted.

`<space>.hnsw` is the hnswlib graph; `<space>.json` (the header) says what it was built from: model
id, dim, live count and the labels marked deleted. Both are written to a temp name, synced and
renamed, so a crash leaves the old pair or the new one. `verify` compares them with the manifest row
and the vectors stored in SQLite before hnswlib reads a byte of the graph (a garbage or truncated
file fails the sha256 first: hnswlib can crash on one).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import hnswlib
import numpy as np

from egodesk.core.manifest import sha256_of

METRIC = "cosine"
M = 16
EF_CONSTRUCTION = 100
EF_SEARCH = 64  # raised to k when k is larger
_SAMPLE_CHECK = 16


@dataclass(frozen=True)
class Manifest:
    """The `index_info` row of a space, as read at load."""

    dim: int
    model_id: str
    count: int
    file: str
    sha256: str


def new_index(dim: int, capacity: int) -> hnswlib.Index:
    index = hnswlib.Index(space=METRIC, dim=dim)
    index.init_index(max_elements=capacity, ef_construction=EF_CONSTRUCTION, M=M)
    index.set_ef(EF_SEARCH)
    return index


def verify(path: Path, header_path: Path, manifest: Manifest, ids: np.ndarray, stored_dim: int | None):
    """(reason, index, dead labels): reason is None when the file can be trusted, else why not."""
    # one shape for every early exit
    fail: Callable[[str], tuple[str, None, list[int]]] = lambda reason: (reason, None, [])  # noqa: E731
    if stored_dim is not None and stored_dim != manifest.dim:
        return fail(f"manifest dim {manifest.dim} but stored vectors are {stored_dim}-d")
    if not path.exists():
        return fail("file missing")
    try:
        header = json.loads(header_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return fail(f"header unreadable ({type(exc).__name__})")
    if sha256_of(path) != manifest.sha256:
        return fail("checksum mismatch (corrupt or truncated file)")
    if header.get("model_id") != manifest.model_id:
        return fail(f"model id mismatch (manifest {manifest.model_id!r}, file {header.get('model_id')!r})")
    if header.get("dim") != manifest.dim:
        return fail(f"dim mismatch (manifest {manifest.dim}, file {header.get('dim')})")
    if not header.get("live") == manifest.count == len(ids):
        return fail(f"count mismatch (file {header.get('live')}, manifest {manifest.count}, database {len(ids)})")
    dead = header.get("dead", [])
    try:
        index = hnswlib.Index(space=METRIC, dim=manifest.dim)
        index.load_index(str(path))
    except (RuntimeError, ValueError, OSError) as exc:
        return fail(f"unreadable ({exc})")
    if index.element_count != manifest.count + len(dead):
        return fail(f"element count mismatch (file {index.element_count}, expected {manifest.count} live + {len(dead)} deleted)")
    sample = ids[np.linspace(0, len(ids) - 1, min(_SAMPLE_CHECK, len(ids))).astype(int)] if len(ids) else ids
    try:
        index.get_items(sample)
    except RuntimeError:
        return fail("labels differ from the stored vectors")
    return None, index, dead


def write(index: hnswlib.Index | None, path: Path, header_path: Path, header: dict) -> str:
    """Save the graph (or remove it when there is none) and its header atomically; returns the
    file's sha256 ("" without a graph)."""
    sha = ""
    if index is not None:
        tmp = path.with_name(path.name + ".tmp")
        index.save_index(str(tmp))
        _fsync(tmp)
        sha = sha256_of(tmp)
        os.replace(tmp, path)
    else:
        path.unlink(missing_ok=True)
    tmp_header = header_path.with_name(header_path.name + ".tmp")
    tmp_header.write_text(json.dumps(header), encoding="utf-8")
    _fsync(tmp_header)
    os.replace(tmp_header, header_path)
    return sha


def _fsync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
