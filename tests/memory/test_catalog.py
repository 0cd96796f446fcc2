"""The retrieval catalog's snapshot of the unit table, on a real store."""

from __future__ import annotations

from egodesk.memory.store import Unit
from egodesk.retrieval.catalog import load_catalog


def test_the_catalog_reads_unit_meta_only_when_asked_and_aligned_with_its_ids(store, make_footage, make_units):
    units = make_units(make_footage(), 6)
    with store.session() as s:
        for i, unit_id in enumerate(units):
            s.get(Unit, unit_id).meta = {"n": i}
    catalog = load_catalog(store)
    assert catalog.meta._raw is None  # not read with the snapshot
    with store.session() as s:
        s.delete(s.get(Unit, units[2]))
    assert [catalog.meta[r] for r in range(len(catalog))] == [{"n": 0}, {"n": 1}, None, {"n": 3}, {"n": 4}, {"n": 5}]
