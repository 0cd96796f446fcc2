"""Synthetic memory at library scale: random-but-clustered vectors and a library laid out like a real one.

Embedding a million texts would take a day here and does not change what a search costs, so the
vectors are synthetic (clustered around topics, closer to text embeddings than uniform noise) while
the units, their kinds, times, texts and metadata follow what the builders write for a 15 s clip:

    caption (parent) + subchunk (child) + memory-entry (Imprint, with importance; object and action
    vectors) + 4 atomic statements (EgoCITE views) + 5 keyframe units and 1 visual-clip unit (CARVE,
    tag labels; searched through the tag vocabulary, so without feature vectors here, each with its
    tag list's text vector in "visual-text")

i.e. 13 units and 14 text vectors per clip; 1M units is ~77k clips, ~320 hours of footage, spread over
100 footages of one day each (fewer for a small library: at least 10 clips a day). A finished library is marked
complete; a half-built one is started over.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from sqlalchemy import func, insert, select

from egodesk.core.paths import LibraryPaths
from egodesk.core.timeutil import to_ts
from egodesk.memory.indices import IndexManager
from egodesk.memory.store import Clip, Footage, Store, Unit

DIM = 384
TOPICS = 500
FOOTAGES = 100
CLIP_S = 15.0
DAY0 = datetime(2024, 1, 1, 8, 0)
ATOMIC_VIEWS = ("action", "utterance", "activity", "conversation")
FRAMES_PER_CLIP = 5
UNITS_PER_CLIP = 3 + len(ATOMIC_VIEWS) + FRAMES_PER_CLIP + 1
LAYOUT_VERSION = 3  # part of the cache key: bump when the layout above changes
COMPLETE = "complete.json"

WORDS = (
    "take put wash open close cut pour stir dry wipe plate cup knife fork spoon pan pot lid tap sink fridge "
    "milk coffee tea bread cheese onion tomato pepper salt oil bowl board towel cloth sponge bin bag drawer "
    "cupboard table chair door window phone laptop book keys umbrella jacket shoes Caroline Melanie Jake "
    "garden park bus station shop market friend sister meeting lunch dinner breakfast"
).split()
TAGS = (
    "coffee mug, plate, frying pan, refrigerator, dishwasher, microwave, toaster, teapot, wooden spoon, "
    "cutting board, kitchen knife, mixing bowl, sink, stove, laptop, notebook, cellular telephone, umbrella, "
    "jacket, sneaker, backpack, bus, street sign, park bench, shopping cart, grocery store, bakery, "
    "dining table, desk, monitor, bookcase, window shade, sliding door, water bottle, wine bottle, banana, "
    "orange, lemon, bell pepper, cucumber"
).split(", ")


def clustered(n: int, rng: np.random.Generator, dim: int = DIM) -> np.ndarray:
    """n vectors around a fixed set of topics (the same topics for every call with a fresh rng)."""
    centres = np.random.default_rng(12345).normal(size=(TOPICS, dim)).astype(np.float32)
    return centres[rng.integers(0, TOPICS, n)] + 0.6 * rng.normal(size=(n, dim)).astype(np.float32)


def plain_units(store: Store, n: int, kind: str = "subchunk") -> np.ndarray:
    """n bare units of one kind in one footage (for index benchmarks); returns their ids."""
    with store.session() as s:
        footage = Footage(content_hash=f"bench-{kind}-{n}", path="/bench.mp4", title="bench", start_ts=0.0, duration=CLIP_S * n)
        s.add(footage)
        s.flush()
        first = (s.scalar(select(func.max(Unit.id))) or 0) + 1
        s.execute(
            insert(Unit),
            [
                {
                    "id": first + i,
                    "footage_id": footage.id,
                    "kind": kind,
                    "start_ts": CLIP_S * i,
                    "end_ts": CLIP_S * (i + 1),
                    "text": "",
                }
                for i in range(n)
            ],
        )
    return np.arange(first, first + n, dtype=np.int64)


def days_for(units: int) -> int:
    """Days (footages) a library of `units` units spans."""
    return max(1, min(FOOTAGES, units // (UNITS_PER_CLIP * 10)))


def asked_at(days: int) -> float:
    """A question time after the whole synthetic library."""
    return to_ts(DAY0 + timedelta(days=days))


def day_title(day: int) -> str:
    return f"day-{day:03d}"


def open_library(
    root: Path, units: int, model_id: str, progress=print, dim: int = DIM
) -> tuple[Store, IndexManager, float | None]:
    """The synthetic library of about `units` units in `root` (text vectors of `dim`, the embedder's):
    reused when complete, else (re)built.
    Returns the store, its indices and the build seconds (None when it was reused)."""
    if root.exists() and not (root / COMPLETE).exists():
        shutil.rmtree(root)
    paths = LibraryPaths.at(root).ensure()
    store = Store(paths.database)
    indices = IndexManager(store, paths.indices)
    if (root / COMPLETE).exists():
        return store, indices, None
    started = time.perf_counter()
    days = days_for(units)
    clips = max(1, units // UNITS_PER_CLIP // days)
    texts, vectors = random.Random(7), np.random.default_rng(7)
    for day in range(days):
        _add_day(store, indices, day, clips, model_id, texts, vectors, dim)
        if day % 10 == 9:
            progress(f"synthetic library: {day + 1}/{days} days of {clips} clips ({time.perf_counter() - started:.0f} s)")
    indices.save()
    seconds = time.perf_counter() - started
    (root / COMPLETE).write_text(
        json.dumps({"units": units, "clips_per_day": clips, "seconds": round(seconds, 1)}), encoding="utf-8"
    )
    return store, indices, seconds


def _sentence(rng: random.Random, words: int = 12) -> str:
    return "I " + " ".join(rng.choices(WORDS, k=words)) + "."


def _labels(rng: random.Random, count: int) -> list[list]:
    return [[tag, round(rng.random(), 3)] for tag in rng.sample(TAGS, count)]


def _add_day(
    store: Store,
    indices: IndexManager,
    day: int,
    clips: int,
    model_id: str,
    rng: random.Random,
    vectors: np.random.Generator,
    dim: int = DIM,
) -> None:
    start = to_ts(DAY0 + timedelta(days=day))
    with store.session() as s:
        footage = Footage(
            content_hash=f"synthetic-{day}",
            path=f"synthetic#{day}",
            kind="text",
            title=day_title(day),
            start_ts=start,
            start_source="text",
            duration=clips * CLIP_S,
        )
        s.add(footage)
        s.flush()
        next_clip = (s.scalar(select(func.max(Clip.id))) or 0) + 1
        next_unit = (s.scalar(select(func.max(Unit.id))) or 0) + 1
        clip_rows, unit_rows = [], []
        spaces: dict[str, list[int]] = {}
        for i in range(clips):
            clip_id, t = next_clip + i, start + CLIP_S * i
            clip_rows.append(
                {"id": clip_id, "footage_id": footage.id, "idx": i, "offset": CLIP_S * i, "start_ts": t, "end_ts": t + CLIP_S}
            )
            base = {
                "footage_id": footage.id,
                "clip_id": clip_id,
                "start_ts": t,
                "end_ts": t + CLIP_S,
                "builder": "synthetic",
                "view": "",
                "meta": None,
                "parent_id": None,
            }
            caption = _sentence(rng)
            rows = [
                {**base, "kind": "caption", "text": caption, "space": "caption"},
                {**base, "kind": "subchunk", "text": caption[: len(caption) // 2], "parent": True, "space": "subchunk"},
                {
                    **base,
                    "kind": "memory-entry",
                    "text": _sentence(rng, 4),
                    "meta": {"importance": round(rng.random(), 3)},
                    "space": ("record-object", "record-action"),
                },
            ]
            rows += [
                {**base, "kind": "atomic", "view": view, "text": _sentence(rng, 8), "space": f"atomic-{view}"}
                for view in ATOMIC_VIEWS
            ]
            frames = [_labels(rng, 5) for _ in range(FRAMES_PER_CLIP)]
            rows += [
                {
                    **base,
                    "kind": "frame",
                    "view": "visual",
                    "builder": "visual",
                    "text": ", ".join(n for n, _ in labels),
                    "meta": {"labels": labels},
                    "space": "visual-text",
                }
                for labels in frames
            ]
            pooled = sorted({n: p for labels in frames for n, p in labels}.items(), key=lambda kv: -kv[1])[:10]
            rows.append(
                {
                    **base,
                    "kind": "visual-clip",
                    "view": "visual",
                    "builder": "visual",
                    "text": ", ".join(n for n, _ in pooled),
                    "meta": {"labels": [list(kv) for kv in pooled]},
                    "space": "visual-text",
                }
            )
            caption_id = next_unit + len(unit_rows)
            for row in rows:
                row["id"] = next_unit + len(unit_rows)
                if row.pop("parent", False):
                    row["parent_id"] = caption_id
                for space in _as_tuple(row.pop("space", ())):
                    spaces.setdefault(space, []).append(row["id"])
                unit_rows.append(row)
        s.execute(insert(Clip), clip_rows)
        s.execute(insert(Unit), unit_rows)
        for space, ids in spaces.items():
            indices.add(space, ids, clustered(len(ids), vectors, dim), model_id, session=s)


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,) if value else ()
