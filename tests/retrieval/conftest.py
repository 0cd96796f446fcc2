"""A small real library for retrieval tests: two days of kitchen narrations and a dated chat, imported
through the benchmark format and built by the real parent-child builder with the real embedder."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from egodesk.core.paths import LibraryPaths
from egodesk.core.settings import Settings
from egodesk.core.timeutil import to_ts
from egodesk.memory.indices import IndexManager
from egodesk.memory.parent_child import build_parent_child
from egodesk.memory.store import Store
from egodesk.pipeline.textimport import import_memory_jsonl
from egodesk.retrieval.base import Memory

DAY1 = datetime(2024, 3, 13, 9, 0)
DAY2 = datetime(2024, 3, 14, 9, 0)
KITCHEN = [
    "I take paper.",
    "I fold paper.",
    "I take plate.",
    "I wash plate.",
    "I put down plate.",
    "I take paper.",
    "I throw paper into bin.",
    "I open fridge.",
    "I take milk.",
    "I close fridge.",
    "I pour milk into glass.",
    "I take paper.",
    "I wipe table.",
]
MORNING = ["I make coffee.", "I take paper.", "I read newspaper.", "I water the plants.", "I take paper.", "I write a note."]
CHAT = [
    "Caroline: I went to the pottery workshop with my cousin, it was amazing.",
    "Melanie: Wow! What did you make there?",
    "Caroline: A blue bowl with a little fish painted inside.",
    "Melanie: That sounds lovely. I ran a charity race for the animal shelter last Sunday.",
    "Caroline: Congratulations! How far did you run?",
    "Melanie: Ten kilometres, and we raised money for the dogs.",
]


def entry(source: str, start: datetime, seconds: int, kind: str, text: str, n: int) -> dict:
    return {
        "id": f"{source}-{n}",
        "source": source,
        "start": start.isoformat(),
        "end": (start + timedelta(seconds=seconds)).isoformat(),
        "kind": kind,
        "text": text,
    }


def memory_rows() -> list[dict]:
    rows = [entry("kitchen", DAY1 + timedelta(seconds=10 * i), 5, "narration", t, i) for i, t in enumerate(KITCHEN)]
    rows += [entry("kitchen-2", DAY2 + timedelta(seconds=10 * i), 5, "narration", t, i) for i, t in enumerate(MORNING)]
    rows += [
        entry("chat", datetime(2024, 3, 10, 18, 0) + timedelta(seconds=20 * i), 20, "transcript", t, i)
        for i, t in enumerate(CHAT)
    ]
    return rows


def ts(moment: datetime, seconds: float = 0) -> float:
    return to_ts(moment + timedelta(seconds=seconds))


@pytest.fixture(scope="session")
def built(tmp_path_factory, embedder):
    return build_library(tmp_path_factory.mktemp("retrieval-library"), embedder)


def build_library(root, embedder, rows: list[dict] | None = None):
    """(store, index manager) of a real library of `rows` (`memory_rows()` by default) in `root`, parent-child built."""
    path = root / "memory.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows or memory_rows()) + "\n", encoding="utf-8")
    paths = LibraryPaths.at(root / "lib").ensure()
    store = Store(paths.database)
    indices = IndexManager(store, paths.indices)
    result = import_memory_jsonl(store, path)
    for fid in result.footage_ids:
        build_parent_child(store, indices, embedder, fid, Settings())
    indices.save()
    return store, indices


@pytest.fixture
def memory(built, embedder) -> Memory:
    store, indices = built
    return Memory(store, indices, embedder, settings=Settings())
