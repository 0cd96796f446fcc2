"""How much memory each footage takes: units, vectors and bytes per unit kind/view, and per minute.

Bytes count what the library keeps for a unit: its text and meta (UTF-8), its vectors (float32 in
SQLite) and its share of each index file (file size x its share of the index's vectors; estimated
from hnswlib's per-element layout when the files are not at hand). Per minute of footage is the
parent-retrieval paper's memory-footprint measure (66 KB/min for its textual memory).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from sqlalchemy import cast, func, select
from sqlalchemy.types import LargeBinary, Text

from egodesk.memory.indexfile import M
from egodesk.memory.store import Footage, IndexInfo, Store, Unit, Vector


def memory_stats(store: Store, indices_dir: Path | None = None) -> list[dict]:
    """One row per (footage, unit kind, view) and a total row per footage (kind "all"), each with:
    footage_id, title, kind, view, units, vectors, text_bytes, vector_bytes, index_bytes, bytes,
    minutes, bytes_per_minute. Footage without units gets only its total row (zeros)."""
    with store.session() as s:
        footage = {f.id: f for f in s.scalars(select(Footage).order_by(Footage.id))}
        text_rows = s.execute(
            select(Unit.footage_id, Unit.kind, Unit.view, func.count(),
                   func.coalesce(func.sum(func.length(cast(Unit.text, LargeBinary))), 0),
                   func.coalesce(func.sum(func.length(cast(cast(Unit.meta, Text), LargeBinary))), 0))
            .group_by(Unit.footage_id, Unit.kind, Unit.view)).all()
        vector_rows = s.execute(
            select(Unit.footage_id, Unit.kind, Unit.view, Vector.space, func.count(), func.sum(func.length(Vector.data)))
            .join(Unit, Vector.unit_id == Unit.id).group_by(Unit.footage_id, Unit.kind, Unit.view, Vector.space)).all()
        per_space = dict(s.execute(select(Vector.space, func.count()).group_by(Vector.space)).all())
        files = {row.name: row.file for row in s.scalars(select(IndexInfo))}

    index_size = {space: _index_bytes(space, count, files.get(space, ""), vector_rows, indices_dir) for space, count in per_space.items()}
    groups: dict[tuple, dict] = defaultdict(lambda: {"units": 0, "vectors": 0, "text_bytes": 0, "vector_bytes": 0, "index_bytes": 0})
    for fid, kind, view, count, text_bytes, meta_bytes in text_rows:
        g = groups[(fid, kind, view)]
        g["units"], g["text_bytes"] = count, int(text_bytes) + int(meta_bytes)
    for fid, kind, view, space, count, data_bytes in vector_rows:
        g = groups[(fid, kind, view)]
        g["vectors"] += count
        g["vector_bytes"] += int(data_bytes)
        g["index_bytes"] += round(index_size[space] * count / max(per_space[space], 1))

    out = []
    for fid, f in footage.items():
        minutes = f.duration / 60.0
        total = {"units": 0, "vectors": 0, "text_bytes": 0, "vector_bytes": 0, "index_bytes": 0}
        for (gid, kind, view), g in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][2])):
            if gid == fid:
                out.append(_row(f, kind, view, g, minutes))
                for key in total:
                    total[key] += g[key]
        out.append(_row(f, "all", "", total, minutes))
    return out


def _row(f: Footage, kind: str, view: str, g: dict, minutes: float) -> dict:
    size = g["text_bytes"] + g["vector_bytes"] + g["index_bytes"]
    return {"footage_id": f.id, "title": f.title, "kind": kind, "view": view, **g, "bytes": size,
            "minutes": round(minutes, 3), "bytes_per_minute": round(size / minutes) if minutes > 0 else None}


def _index_bytes(space: str, count: int, file: str, vector_rows, indices_dir: Path | None) -> int:
    """The index file's size, or (no file at hand) hnswlib's layout: per element the vector, the
    level-0 links (2M ids + a count), the label, and on average ~1/ln(M) of an upper level."""
    if indices_dir is not None and file and (Path(indices_dir) / file).exists():
        return (Path(indices_dir) / file).stat().st_size
    vector_bytes = next((int(b) // max(int(c), 1) for *_, sp, c, b in vector_rows if sp == space), 0)
    per_element = vector_bytes + (2 * M + 1) * 4 + 8 + (M + 1) * 4 // 3
    return per_element * count
