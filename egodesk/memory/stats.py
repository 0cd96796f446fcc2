"""How much memory each footage takes: units, vectors and bytes per unit kind/view, and per minute.

Bytes count what the library keeps for a unit: its text and meta (UTF-8), its vectors (float32 in
SQLite) and its share of each index file (file size x its share of the index's vectors; estimated
from hnswlib's per-element layout when the files are not at hand). Per minute of footage is the
parent-retrieval paper's memory-footprint measure (66 KB/min for its textual memory).

`footage_summary` adds, per footage and in total, how the interaction-record memory grew (raw records
extracted, kept ones, consolidated entries, prototypes: `record_compression.growth_report`) and the atomic
statements per view.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from sqlalchemy import cast, func, select
from sqlalchemy.types import LargeBinary, Text

from egodesk.memory import atomic
from egodesk.memory.indexfile import M
from egodesk.memory.record_compression import growth_report
from egodesk.memory.schema import Footage, IndexInfo, Unit, Vector
from egodesk.memory.store import Store


def memory_stats(store: Store, indices_dir: Path | None = None) -> list[dict]:
    """One row per (footage, unit kind, view) and a total row per footage (kind "all"), each with:
    footage_id, title, kind, view, units, vectors, text_bytes, vector_bytes, index_bytes, bytes,
    minutes, bytes_per_minute. Footage without units gets only its total row (zeros)."""
    with store.session() as s:
        footage = {f.id: f for f in s.scalars(select(Footage).order_by(Footage.id))}
        text_rows = s.execute(
            select(
                Unit.footage_id,
                Unit.kind,
                Unit.view,
                func.count(),
                func.coalesce(func.sum(func.length(cast(Unit.text, LargeBinary))), 0),
                func.coalesce(func.sum(func.length(cast(cast(Unit.meta, Text), LargeBinary))), 0),
            ).group_by(Unit.footage_id, Unit.kind, Unit.view)
        ).all()
        vector_rows = s.execute(
            select(Unit.footage_id, Unit.kind, Unit.view, Vector.space, func.count(), func.sum(func.length(Vector.data)))
            .join(Unit, Vector.unit_id == Unit.id)
            .group_by(Unit.footage_id, Unit.kind, Unit.view, Vector.space)
        ).all()
        per_space = dict(s.execute(select(Vector.space, func.count()).group_by(Vector.space)).all())
        files = {row.name: row.file for row in s.scalars(select(IndexInfo))}

    index_size = {
        space: _index_bytes(space, count, files.get(space, ""), vector_rows, indices_dir) for space, count in per_space.items()
    }
    groups: dict[tuple, dict] = defaultdict(
        lambda: {"units": 0, "vectors": 0, "text_bytes": 0, "vector_bytes": 0, "index_bytes": 0}
    )
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


_SIZES = ("units", "vectors", "text_bytes", "vector_bytes", "index_bytes", "bytes", "minutes")
_GROWTH = ("raw_records", "kept_records", "dropped_records", "memory_entries", "prototypes")


def footage_summary(store: Store, indices_dir: Path | None = None, rows: list[dict] | None = None) -> dict:
    """{"footage": one dict per footage, "totals": the same over the library}. Each holds footage_id
    and title (footage only), the sizes of its "all" row of `memory_stats` (`rows`, computed when not
    given) with bytes_per_minute and text_bytes_per_minute, "records": `growth_report` without the
    footage id (raw/kept/dropped records, memory entries, prototypes, compression = raw per entry; the
    footage's curve too) and "atomic": statements per view."""
    rows = memory_stats(store, indices_dir) if rows is None else rows
    out = []
    for total in (r for r in rows if r["kind"] == "all"):
        fid = total["footage_id"]
        growth = growth_report(store, fid)
        growth.pop("footage_id")
        views = {r["view"]: r["units"] for r in rows if r["footage_id"] == fid and r["kind"] == atomic.KIND}
        out.append(
            {
                "footage_id": fid,
                "title": total["title"],
                **_sizes({k: total[k] for k in _SIZES}),
                "records": growth,
                "atomic": {view: views.get(view, 0) for view in atomic.VIEWS},
            }
        )
    sums = {k: sum(f[k] for f in out) for k in _SIZES}
    growth = {k: sum(f["records"][k] for f in out) for k in _GROWTH}
    growth["compression"] = round(growth["raw_records"] / growth["memory_entries"], 3) if growth["memory_entries"] else None
    totals = {
        "footage": len(out),
        **_sizes(sums),
        "records": growth,
        "atomic": {view: sum(f["atomic"][view] for f in out) for view in atomic.VIEWS},
    }
    return {"footage": out, "totals": totals}


def _sizes(sizes: dict) -> dict:
    minutes = sizes["minutes"]
    per_minute = {
        "bytes_per_minute": round(sizes["bytes"] / minutes) if minutes > 0 else None,
        "text_bytes_per_minute": round(sizes["text_bytes"] / minutes) if minutes > 0 else None,
    }
    return {**sizes, "minutes": round(minutes, 3), **per_minute}


def _row(f: Footage, kind: str, view: str, g: dict, minutes: float) -> dict:
    size = g["text_bytes"] + g["vector_bytes"] + g["index_bytes"]
    return {
        "footage_id": f.id,
        "title": f.title,
        "kind": kind,
        "view": view,
        **g,
        "bytes": size,
        "minutes": round(minutes, 3),
        "bytes_per_minute": round(size / minutes) if minutes > 0 else None,
    }


def _index_bytes(space: str, count: int, file: str, vector_rows, indices_dir: Path | None) -> int:
    """The index file's size, or (no file at hand) hnswlib's layout: per element the vector, the
    level-0 links (2M ids + a count), the label, and on average ~1/ln(M) of an upper level."""
    if indices_dir is not None and file and (Path(indices_dir) / file).exists():
        return (Path(indices_dir) / file).stat().st_size
    vector_bytes = next((int(b) // max(int(c), 1) for *_, sp, c, b in vector_rows if sp == space), 0)
    per_element = vector_bytes + (2 * M + 1) * 4 + 8 + (M + 1) * 4 // 3
    return per_element * count
