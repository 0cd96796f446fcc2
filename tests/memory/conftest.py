"""Fixtures for the memory tests: a scratch store and library folders, and a footage with units."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from egodesk.core.paths import LibraryPaths
from egodesk.memory.indices import IndexManager
from egodesk.memory.store import Footage, Store, Unit
from egodesk.pipeline.textimport import import_memory_jsonl


@pytest.fixture
def lib_paths(tmp_path) -> LibraryPaths:
    return LibraryPaths.at(tmp_path / "lib").ensure()


@pytest.fixture
def store(lib_paths):
    opened = Store(lib_paths.database)
    yield opened
    opened.close()


def add_footage(store: Store, name: str = "f", start: float = 1_000_000.0, duration: float = 600.0) -> int:
    with store.session() as s:
        footage = Footage(
            content_hash=name.ljust(64, "0")[:64], path=f"/x/{name}.mp4", title=name, start_ts=start, duration=duration
        )
        s.add(footage)
        s.flush()
        return footage.id


def add_units(store: Store, footage_id: int, n: int, kind: str = "caption", start: float = 1_000_000.0) -> list[int]:
    with store.session() as s:
        units = [
            Unit(footage_id=footage_id, kind=kind, start_ts=start + 10 * i, end_ts=start + 10 * i + 10, text=f"unit {i}")
            for i in range(n)
        ]
        s.add_all(units)
        s.flush()
        return [u.id for u in units]


@pytest.fixture
def make_footage(store):
    """make_footage(name, start, duration) -> footage id"""
    return lambda *args, **kw: add_footage(store, *args, **kw)


@pytest.fixture
def make_units(store):
    """make_units(footage_id, n, kind, start) -> unit ids"""
    return lambda *args, **kw: add_units(store, *args, **kw)


CLIP_S = 15.0


def add_video(
    store: Store,
    thumbs_dir,
    labels_per_clip: list[list[list]],
    start: float = 2_000_000.0,
    name: str = "video",
    captions: list[str] | None = None,
    seed: int = 0,
) -> int:
    """A video footage with one 15 s clip per entry of `labels_per_clip`, two keyframes a clip (features
    near a per-clip direction, thumbnails written under `thumbs_dir/<footage id>/`), a caption and a
    transcript segment per clip."""
    from pathlib import Path

    import numpy as np

    from egodesk.memory.store import Caption, Clip, Keyframe, TranscriptSegment

    rng = np.random.default_rng(seed)
    with store.session() as s:
        footage = Footage(
            content_hash=name.ljust(64, "v")[:64],
            path=f"/x/{name}.mp4",
            title=name,
            start_ts=start,
            duration=CLIP_S * len(labels_per_clip),
            has_audio=True,
        )
        s.add(footage)
        s.flush()
        folder = Path(thumbs_dir) / str(footage.id)
        folder.mkdir(parents=True, exist_ok=True)
        for i, labels in enumerate(labels_per_clip):
            t0 = start + CLIP_S * i
            clip = Clip(footage_id=footage.id, idx=i, offset=CLIP_S * i, start_ts=t0, end_ts=t0 + CLIP_S)
            s.add(clip)
            s.flush()
            direction = rng.normal(size=1280)
            for k in range(2):
                thumb = folder / f"{i:05d}_{k}.jpg"
                thumb.write_bytes(b"\xff\xd8 jpeg")
                feature = (direction + 0.1 * rng.normal(size=1280)).astype(np.float32)
                s.add(
                    Keyframe(
                        clip_id=clip.id,
                        idx=k,
                        offset=CLIP_S * i + 5 * k,
                        ts=t0 + 5 * k,
                        thumb_path=str(thumb),
                        feature=feature.tobytes(),
                        labels=labels,
                    )
                )
            text = (captions or [])[i] if captions and i < len(captions) else f"I am in scene {i}. I see {labels[0][0]}."
            s.add(
                Caption(clip_id=clip.id, footage_id=footage.id, start_ts=t0, end_ts=t0 + CLIP_S, text=text, captioner="describe")
            )
            s.add(
                TranscriptSegment(
                    footage_id=footage.id,
                    clip_id=clip.id,
                    idx=i,
                    start_ts=t0 + 1,
                    end_ts=t0 + 4,
                    text=f"words number {i}",
                    speaker="Alice",
                )
            )
        return footage.id


@pytest.fixture
def make_video(store, lib_paths):
    """make_video(labels_per_clip, start=..., name=..., captions=...) -> footage id"""
    return lambda *args, **kw: add_video(store, lib_paths.thumbnails, *args, **kw)


def narrated_day(folder: Path, narrations: list[tuple[datetime, str]]) -> tuple[Store, IndexManager, int]:
    """A new library in `folder` holding one footage, "day", of 20-second narrations imported from a
    JSONL file as a user imports one: (store, indices, footage id)."""
    folder.mkdir()
    path = folder / "day.jsonl"
    lines = (
        {
            "source": "day",
            "start": start.isoformat(),
            "end": (start + timedelta(seconds=20)).isoformat(),
            "kind": "narration",
            "text": text,
        }
        for start, text in narrations
    )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    store = Store(folder / "library.db")
    [footage] = import_memory_jsonl(store, path).footage_ids
    return store, IndexManager(store, folder / "indices"), footage
