"""Memory statistics per footage and unit kind."""

from __future__ import annotations

from egodesk.memory.indices import IndexManager
from egodesk.memory.parent_child import build_parent_child
from egodesk.memory.stats import memory_stats
from egodesk.memory.visual import build_visual


def test_memory_stats(store, lib_paths, embedder, make_video, make_footage):
    footage = make_video([[["umbrella", 0.8]], [["laptop", 0.7]]])
    empty = make_footage("empty", duration=120.0)
    indices = IndexManager(store, lib_paths.indices)
    build_parent_child(store, indices, embedder, footage)
    build_visual(store, indices, embedder, footage)

    rows = memory_stats(store, lib_paths.indices)
    mine = {(r["kind"], r["view"]): r for r in rows if r["footage_id"] == footage}
    assert set(mine) == {("caption", ""), ("transcript", ""), ("subchunk", ""), ("frame", "visual"), ("visual-clip", "visual"), ("all", "")}
    assert mine[("caption", "")]["units"] == 2 and mine[("caption", "")]["vectors"] == 2
    assert mine[("caption", "")]["vector_bytes"] == 2 * 384 * 4
    assert mine[("frame", "visual")]["vector_bytes"] == 4 * 1280 * 4
    total = mine[("all", "")]
    assert total["units"] == sum(r["units"] for k, r in mine.items() if k[0] != "all")
    assert total["bytes"] == total["text_bytes"] + total["vector_bytes"] + total["index_bytes"] > 0
    assert total["minutes"] == 0.5 and total["bytes_per_minute"] == round(total["bytes"] / 0.5)
    # the index shares add up to the files
    files = sum(indices.file_bytes(space) for space in indices.spaces())
    assert abs(sum(r["index_bytes"] for r in rows if r["kind"] != "all") - files) <= 10
    estimated = {(r["kind"], r["view"]): r for r in memory_stats(store) if r["footage_id"] == footage}
    assert 0 < estimated[("all", "")]["index_bytes"]
    assert [r for r in rows if r["footage_id"] == empty] == [
        {"footage_id": empty, "title": "empty", "kind": "all", "view": "", "units": 0, "vectors": 0, "text_bytes": 0,
         "vector_bytes": 0, "index_bytes": 0, "bytes": 0, "minutes": 2.0, "bytes_per_minute": 0}]
