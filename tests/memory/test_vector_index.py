"""Vectors in SQLite and the hnswlib indices over them: add/search/remove, filtered and oversized
queries, growth, transactions, rebuild of an untrustworthy file, concurrent use."""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest
from sqlalchemy import select

from egodesk.memory import indices as indices_mod
from egodesk.memory.indices import IndexManager, IndexModelMismatch
from egodesk.memory.store import IndexInfo, Unit, Vector
from egodesk.memory.vectors import delete_vectors, load_vectors, put_vectors

DIM = 32


def vectors(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)


@pytest.fixture
def units(make_footage, make_units):
    return make_units(make_footage(), 300)


@pytest.fixture
def manager(store, lib_paths):
    return IndexManager(store, lib_paths.indices)


def test_vectors_round_trip_normalised(store, units):
    data = vectors(10)
    with store.session() as s:
        put_vectors(s, "caption", units[:10], data)
        put_vectors(s, "caption", units[:1], data[5:6])  # replaces
    with store.session() as s:
        ids, matrix = load_vectors(s, "caption")
        assert ids.tolist() == units[:10] and matrix.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, rtol=1e-5)
        np.testing.assert_allclose(matrix[0], data[5] / np.linalg.norm(data[5]), rtol=1e-5)
        sub_ids, _ = load_vectors(s, "caption", [units[3], units[50]])
        assert sub_ids.tolist() == [units[3]]
        assert delete_vectors(s, "caption", units[:4]) == 4
    with store.session() as s:
        assert len(load_vectors(s, "caption")[0]) == 6
        with pytest.raises(ValueError, match="zero"):
            put_vectors(s, "caption", units[:1], np.zeros((1, DIM)))


def test_add_search_remove(manager, units):
    data = vectors(200)
    manager.add("caption", units[:200], data, "m")
    assert manager.count("caption") == 200
    hits = manager.search("caption", data[[7, 9]], 5)
    assert [h[0][0] for h in hits] == [units[7], units[9]]
    assert hits[0][0][1] == pytest.approx(1.0, abs=1e-4) and len(hits[0]) == 5
    assert hits[0][0][1] >= hits[0][1][1] >= hits[0][4][1]
    manager.remove("caption", [units[7]])
    assert manager.count("caption") == 199
    assert units[7] not in [u for u, _ in manager.search("caption", data[7], 50)[0]]
    manager.add("caption", [units[7]], data[7:8], "m")  # a removed label comes back
    assert manager.search("caption", data[7], 1)[0][0][0] == units[7]
    assert manager.search("unknown", data[0], 3) == [[]]


def test_k_beyond_count_and_filters(manager, units, monkeypatch):
    data = vectors(60)
    manager.add("caption", units[:60], data, "m")
    assert len(manager.search("caption", data[0], 500)[0]) == 60
    allowed = units[10:13]
    hits = manager.search("caption", data[0], 10, allowed_ids=allowed)[0]
    assert sorted(u for u, _ in hits) == sorted(allowed)
    exact = data[10:13] / np.linalg.norm(data[10:13], axis=1, keepdims=True) @ (data[0] / np.linalg.norm(data[0]))
    assert [u for u, _ in hits] == [allowed[i] for i in np.argsort(-exact)]
    assert manager.search("caption", data[0], 5, allowed_ids=[units[200]]) == [[]]  # no vector
    monkeypatch.setattr(indices_mod, "EXACT_MIN", 5)  # force the filtered graph walk
    monkeypatch.setattr(indices_mod, "EXACT_SHARE", 0.0)
    big = set(units[20:60:2])
    hits = manager.search("caption", data[[22, 23]], 4, allowed_ids=big)
    assert hits[0][0][0] == units[22] and all(u in big for row in hits for u, _ in row)
    assert len(manager.search("caption", data[0], 100, allowed_ids=big)[0]) == len(big)


def test_exact_scoring_sees_replaced_and_removed_vectors(manager, units):
    data = vectors(40, seed=5)
    manager.add("caption", units[:40], data, "m")
    allowed = units[:10]
    assert manager.search("caption", data[3], 1, allowed_ids=allowed)[0][0][0] == units[3]  # vectors read and kept
    manager.add("caption", [units[8]], data[3:4], "m")  # units[8] now holds units[3]'s vector
    hits = manager.search("caption", data[3], 2, allowed_ids=allowed)[0]
    assert {u for u, _ in hits} == {units[3], units[8]} and hits[1][1] == pytest.approx(1.0, abs=1e-4)
    manager.remove("caption", [units[3]])
    manager.add("caption", [units[3]], -data[3:4], "m")  # removed, then back with the opposite vector
    assert manager.search("caption", data[3], 10, allowed_ids=allowed)[0][-1] == (units[3], pytest.approx(-1.0, abs=1e-4))


def test_capacity_grows(manager, store, make_footage, make_units):
    ids = make_units(make_footage("big"), 2600)
    data = vectors(2600, seed=3)
    for start in range(0, 2600, 650):
        manager.add("subchunk", ids[start : start + 650], data[start : start + 650], "m")
    sp = manager._spaces["subchunk"]
    assert sp.index.get_max_elements() >= 2600 > indices_mod.MIN_CAPACITY
    assert [h[0][0] for h in manager.search("subchunk", data[[0, 2599]], 1)] == [ids[0], ids[2599]]


def test_writes_follow_the_transaction(manager, store, units):
    data = vectors(20)
    with pytest.raises(RuntimeError):
        with store.session() as s:
            manager.add("caption", units[:20], data, "m", session=s)
            raise RuntimeError("builder failed")
    assert manager.count("caption") == 0
    with store.session() as s:
        assert s.scalar(select(Vector.unit_id).limit(1)) is None
    with store.session() as s:
        manager.add("caption", units[:20], data, "m", session=s)
        assert manager.count("caption") == 0  # not before the commit
    assert manager.count("caption") == 20


def test_model_mismatch_refused(manager, units):
    manager.add("caption", units[:5], vectors(5), "model-a")
    with pytest.raises(IndexModelMismatch, match="model-a"):
        manager.add("caption", units[5:10], vectors(5), "model-b")
    with pytest.raises(IndexModelMismatch):
        manager.add("caption", units[5:10], vectors(5, dim=8), "model-a")
    manager.drop("caption")
    manager.add("caption", units[5:10], vectors(5), "model-b")
    assert manager.model_id("caption") == "model-b" and manager.count("caption") == 5


def test_remove_units_from_every_space(manager, units):
    manager.add("caption", units[:10], vectors(10), "m")
    manager.add("transcript", units[5:15], vectors(10, seed=1), "m")
    assert manager.remove_units(units[:8]) == {"caption": 8, "transcript": 3}
    assert manager.count("caption") == 2 and manager.count("transcript") == 7


def _tamper_garbage(lib_paths, store):
    (lib_paths.indices / "caption.hnsw").write_bytes(b"\x00garbage" * 100)


def _tamper_truncate(lib_paths, store):
    path = lib_paths.indices / "caption.hnsw"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _tamper_missing(lib_paths, store):
    (lib_paths.indices / "caption.hnsw").unlink()


def _tamper_dim(lib_paths, store):
    with store.session() as s:
        s.get(IndexInfo, "caption").dim = 16


def _tamper_model(lib_paths, store):
    with store.session() as s:
        s.get(IndexInfo, "caption").model_id = "another-model"


def _tamper_unsaved_rows(lib_paths, store):  # a crash after a commit, before the next save
    with store.session() as s:
        extra = s.scalars(select(Unit.id).order_by(Unit.id.desc()).limit(3)).all()
        put_vectors(s, "caption", extra, vectors(3, seed=9))


@pytest.mark.parametrize(
    "tamper, reason",
    [
        (_tamper_garbage, "checksum mismatch"),
        (_tamper_truncate, "checksum mismatch"),
        (_tamper_missing, "file missing"),
        (_tamper_dim, "manifest dim 16"),
        (_tamper_model, "model id mismatch"),
        (_tamper_unsaved_rows, "count mismatch"),
    ],
)
def test_untrusted_file_is_rebuilt(store, lib_paths, units, caplog, tamper, reason):
    data = vectors(100)
    first = IndexManager(store, lib_paths.indices)
    first.add("caption", units[:100], data, "m")
    first.save()
    tamper(lib_paths, store)
    with store.session() as s:
        expected = len(load_vectors(s, "caption")[0])

    again = IndexManager(store, lib_paths.indices)
    with caplog.at_level(logging.INFO, logger="egodesk.memory.indices"):
        assert again.search("caption", data[42], 1)[0][0][0] == units[42]
    lines = [r.getMessage() for r in caplog.records if r.name == "egodesk.memory.indices"]
    assert any(reason in line and f"rebuilt from {expected} vectors" in line for line in lines), lines
    assert again.count("caption") == expected and again.dim("caption") == DIM
    caplog.clear()
    again.save()
    third = IndexManager(store, lib_paths.indices)
    with caplog.at_level(logging.INFO, logger="egodesk.memory.indices"):
        assert third.count("caption") == expected
    assert not caplog.records  # the saved rebuild is trusted


def test_saved_index_loads_without_rebuild(store, lib_paths, units, caplog):
    data = vectors(50)
    first = IndexManager(store, lib_paths.indices)
    first.add("caption", units[:50], data, "m")
    first.remove("caption", units[:5])
    first.save()
    with caplog.at_level(logging.DEBUG, logger="egodesk.memory.indices"):
        second = IndexManager(store, lib_paths.indices)
        assert second.count("caption") == 45
        assert second.search("caption", data[30], 1)[0][0][0] == units[30]
    assert not caplog.records
    with store.session() as s:
        row = s.get(IndexInfo, "caption")
        assert (row.count, row.dim, row.model_id, row.metric, row.file) == (45, DIM, "m", "cosine", "caption.hnsw")
        assert len(row.sha256) == 64


def test_searches_while_writing(store, lib_paths, make_footage, make_units):
    ids = make_units(make_footage("c"), 2000)
    data = vectors(2000, seed=5)
    manager = IndexManager(store, lib_paths.indices)
    manager.add("caption", ids[:200], data[:200], "m")
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader():
        try:
            while not stop.is_set():
                for row in manager.search("caption", data[:4], 10):
                    assert row and all(-1.01 <= sim <= 1.01 for _, sim in row)
        except BaseException as exc:  # noqa: BLE001 - reported to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for start in range(200, 2000, 100):
        manager.add("caption", ids[start : start + 100], data[start : start + 100], "m")
        manager.remove("caption", ids[start - 50 : start - 40])
    stop.set()
    for t in threads:
        t.join()
    assert not errors
    assert manager.count("caption") == 2000 - 18 * 10


def test_removal_by_a_fresh_manager_is_saved(store, lib_paths, units, caplog):
    first = IndexManager(store, lib_paths.indices)
    first.add("caption", units[:30], vectors(30), "m")
    first.save()
    second = IndexManager(store, lib_paths.indices)  # e.g. a `forget` run in a new process
    assert second.remove_units(units[:10]) == {"caption": 10}
    second.save()
    with caplog.at_level(logging.DEBUG, logger="egodesk.memory.indices"):
        assert IndexManager(store, lib_paths.indices).count("caption") == 20
    assert not caplog.records


def test_whether_a_space_has_vectors_is_known_without_loading_its_index(store, lib_paths, units):
    first = IndexManager(store, lib_paths.indices)
    first.add("caption", units[:5], vectors(5), "m")
    first.save()
    second = IndexManager(store, lib_paths.indices)
    assert second.has_vectors("caption") and not second.has_vectors("transcript")
    assert second._spaces == {}  # nothing was loaded: a big library's index costs a large share of a second
    second.remove("caption", units[:5])
    assert not second.has_vectors("caption")  # a loaded space answers from its live labels
