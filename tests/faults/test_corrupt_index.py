"""A corrupt index file in a library the pipeline built (truncated, overwritten with garbage, or
replaced by an index of another dimension): the load detects it before hnswlib reads it, rebuilds the
index from the vectors in SQLite, logs why, and once saved the file is trusted again. The index unit
tests (tests/memory/test_vector_index.py::test_untrusted_file_is_rebuilt) cover the same checks one
by one, also a missing file, a manifest of another dimension or model and unsaved rows."""

from __future__ import annotations

import json
import logging

import hnswlib
import numpy as np
import pytest

from egodesk.memory.indices import IndexManager
from egodesk.memory.store import Store
from egodesk.memory.vectors import load_vectors
from tests.faults.harness import copy_library, snapshot

pytestmark = pytest.mark.faults

SPACE = "subchunk"


def truncated(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def garbage(path):
    path.write_bytes(np.random.default_rng(0).bytes(path.stat().st_size))


def other_dimension(path):
    """A sound hnswlib file with the same labels, of 16-d vectors (as another embedding model makes)."""
    labels = json.loads(path.with_suffix(".json").read_text())
    old = hnswlib.Index(space="cosine", dim=labels["dim"])
    old.load_index(str(path))
    ids = np.array(old.get_ids_list())
    index = hnswlib.Index(space="cosine", dim=16)
    index.init_index(max_elements=len(ids))
    index.add_items(np.random.default_rng(0).normal(size=(len(ids), 16)).astype(np.float32), ids)
    index.save_index(str(path))
    path.with_suffix(".json").write_text(json.dumps({**labels, "dim": 16}))


@pytest.mark.parametrize(
    "tamper, reason", [(truncated, "checksum mismatch"), (garbage, "checksum mismatch"), (other_dimension, "checksum mismatch")]
)
def test_corrupt_index_is_rebuilt_from_sqlite_and_logged(tmp_path, reference, caplog, tamper, reason):
    root = copy_library(reference.root, tmp_path / "lib")
    tamper(root / "indices" / f"{SPACE}.hnsw")
    store = Store(root / "library.sqlite")
    try:
        with store.session() as s:
            ids, matrix = load_vectors(s, SPACE)
        manager = IndexManager(store, root / "indices")
        with caplog.at_level(logging.INFO, logger="egodesk.memory.indices"):
            hits = manager.search(SPACE, matrix, 1)
        assert [h[0][0] for h in hits] == ids.tolist()  # every stored vector finds itself
        lines = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "egodesk.memory.indices"]
        assert any(
            level == logging.WARNING and f"index {SPACE}: {reason}" in text and f"rebuilt from {len(ids)} vectors" in text
            for level, text in lines
        ), lines
        caplog.clear()
        manager.save()
        with caplog.at_level(logging.INFO, logger="egodesk.memory.indices"):
            assert IndexManager(store, root / "indices").count(SPACE) == len(ids)
        assert not caplog.records  # the saved rebuild is trusted
    finally:
        store.close()
    assert snapshot(root)["index labels"] == reference.final["index labels"]
