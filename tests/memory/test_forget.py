"""Forgetting a footage or a time range of it: no row, no vector, no index label, no thumbnail."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, select

from egodesk.memory.forget import forget
from egodesk.memory.indices import IndexManager
from egodesk.memory.parent_child import build_parent_child
from egodesk.memory.store import Caption, Clip, Footage, Keyframe, TranscriptSegment, Unit, Vector
from egodesk.memory.visual import build_visual

SCENES = [[["umbrella", 0.8]], [["espresso", 0.9]], [["laptop", 0.7]], [["plate", 0.6]]]
SPACES = ("caption", "transcript", "subchunk", "visual-frame", "visual-clip")


@pytest.fixture
def built(store, lib_paths, embedder, make_video):
    keep = make_video(SCENES, name="keep", start=1_000_000.0, seed=1)
    gone = make_video(SCENES, name="gone", start=3_000_000.0, seed=2)
    indices = IndexManager(store, lib_paths.indices)
    for footage in (keep, gone):
        build_parent_child(store, indices, embedder, footage)
        build_visual(store, indices, embedder, footage)
    return keep, gone, indices


def snapshot(store, footage_id):
    with store.session() as s:
        units = set(s.scalars(select(Unit.id).where(Unit.footage_id == footage_id)))
        thumbs = [Path(p) for p in s.scalars(select(Keyframe.thumb_path).join(Clip).where(Clip.footage_id == footage_id))]
    return units, thumbs


def labels_of(indices, unit_ids):
    """Which of the units any index still returns (searching each space exhaustively, from disk too)."""
    found = set()
    for space in SPACES:
        dim = indices.dim(space)
        if dim:
            probe = np.ones(dim, dtype=np.float32)
            found |= {u for u, _ in indices.search(space, probe, 10_000)[0]} & unit_ids
    return found


def test_forget_footage(store, lib_paths, built):
    keep, gone, indices = built
    units, thumbs = snapshot(store, gone)
    kept_units, kept_thumbs = snapshot(store, keep)
    assert units and all(t.exists() for t in thumbs)
    report = forget(store, indices, lib_paths, gone)
    assert report.footage_deleted and report.units == len(units) and report.thumbnails == len(thumbs) == 8
    with store.session() as s:
        assert s.get(Footage, gone) is None
        for table in (Clip, Caption, TranscriptSegment, Unit):
            assert s.scalar(select(func.count()).select_from(table).where(table.footage_id == gone)) == 0
        assert s.scalar(select(func.count()).select_from(Vector).where(Vector.unit_id.in_(units))) == 0
        assert s.scalar(select(func.count()).select_from(Keyframe)) == 8  # the other footage's
    assert not labels_of(indices, units)
    assert not labels_of(IndexManager(store, lib_paths.indices), units)  # the saved files agree
    assert not any(t.exists() for t in thumbs) and not (lib_paths.thumbnails / str(gone)).exists()
    assert labels_of(indices, kept_units) == {u for u in kept_units if _has_vector(store, u)}
    assert all(t.exists() for t in kept_thumbs)


def test_forget_time_range(store, lib_paths, built):
    keep, gone, indices = built
    start = 3_000_000.0 + 15 * 1 + 2  # inside clip 1 ...
    end = 3_000_000.0 + 15 * 2 + 3  # ... to inside clip 2
    with store.session() as s:
        doomed_clips = set(s.scalars(select(Clip.id).where(Clip.footage_id == gone, Clip.idx.in_([1, 2]))))
        doomed = set(s.scalars(select(Unit.id).where(Unit.clip_id.in_(doomed_clips))))
        thumbs = [Path(p) for p in s.scalars(select(Keyframe.thumb_path).where(Keyframe.clip_id.in_(doomed_clips)))]
    units_before, _ = snapshot(store, gone)
    report = forget(store, indices, lib_paths, gone, start, end)
    assert not report.footage_deleted and report.clips == 2 and report.units == len(doomed) and report.thumbnails == 4
    remaining, remaining_thumbs = snapshot(store, gone)
    assert remaining == units_before - doomed and remaining
    with store.session() as s:
        assert s.get(Footage, gone) is not None
        assert sorted(s.scalars(select(Clip.idx).where(Clip.footage_id == gone))) == [0, 3]
        for table in (Caption, TranscriptSegment):
            rows = s.execute(select(table.start_ts, table.end_ts).where(table.footage_id == gone)).all()
            assert len(rows) == 2 and all(e <= start or b >= end for b, e in rows)
        assert s.scalar(select(func.count()).select_from(Vector).where(Vector.unit_id.in_(doomed))) == 0
    assert not labels_of(indices, doomed) and not labels_of(IndexManager(store, lib_paths.indices), doomed)
    assert labels_of(indices, remaining) == {u for u in remaining if _has_vector(store, u)}
    assert not any(t.exists() for t in thumbs) and len(remaining_thumbs) == 4 and all(t.exists() for t in remaining_thumbs)


def test_forget_unknown_footage(store, lib_paths):
    with pytest.raises(KeyError):
        forget(store, IndexManager(store, lib_paths.indices), lib_paths, 999)


def _has_vector(store, unit_id):
    with store.session() as s:
        return s.scalar(select(func.count()).select_from(Vector).where(Vector.unit_id == unit_id)) > 0
