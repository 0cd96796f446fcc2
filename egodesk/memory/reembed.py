"""Re-embedding a library's text spaces with another text embedder, resumably, while it stays usable.

Every space records the model that built its vectors (`index_info.model_id`). A space built by another
known text embedder is re-embedded into a shadow space (`reembed-<space>`), a batch per transaction,
so a kill loses at most the batch in flight and the next run continues with the units the shadow lacks
(also units added meanwhile). Until every shadow is complete the library keeps its old vectors and
questions keep using the embedder that built them (`library_model`); then one transaction swaps all
shadows in (old vectors out, rows renamed, manifest rows to the new model) and the indices are rebuilt
from SQLite. Spaces of other models (visual features) are left alone.

What a unit's vector embeds: its text, except in the interaction-record spaces, where a record holds
the embedding of its object / action and a memory entry the normalised sum of its members' vectors
(as `record_compression._compress` makes them). The records' compression state (event prototypes, history) stays
that of the old embedder: it only matters to a records build left unfinished across the change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sqlalchemy import delete, func, select, update

from egodesk.core.types import Progress
from egodesk.memory.indices import IndexManager
from egodesk.memory.record_compression import ACTION_SPACE, ENTRY, OBJECT_SPACE
from egodesk.memory.record_tables import MemoryEntryState, to_bytes
from egodesk.memory.store import IndexInfo, Store, Unit, Vector
from egodesk.memory.vectors import load_vectors, normalise
from egodesk.perception.embedder import ROLE_OF_MODEL_ID, TextEmbedder

STAGE = "re-embed"
SHADOW = "reembed-"
BATCH = 32
_RECORD_FIELD = {OBJECT_SPACE: "object", ACTION_SPACE: "action"}


def library_model(store: Store) -> str | None:
    """The text embedder model that built the library's searchable text spaces (None: none yet).
    While a re-embedding runs this is still the old one: its vectors are the ones searched."""
    with store.session() as s:
        rows = s.execute(
            select(IndexInfo.model_id, func.count())
            .where(IndexInfo.model_id.in_(ROLE_OF_MODEL_ID), IndexInfo.name.not_like(f"{SHADOW}%"))
            .group_by(IndexInfo.model_id)
        ).all()
    return max(rows, key=lambda r: r[1])[0] if rows else None


def library_role(store: Store, default: str) -> str:
    """The manifest role of the embedder whose vectors the library holds (`default` for a new one)."""
    model = library_model(store)
    return ROLE_OF_MODEL_ID[model] if model else default


def stale_spaces(store: Store, model_id: str) -> list[str]:
    """Text spaces built by another known text embedder than `model_id`."""
    with store.session() as s:
        return sorted(
            s.scalars(
                select(IndexInfo.name).where(
                    IndexInfo.model_id.in_(ROLE_OF_MODEL_ID),
                    IndexInfo.model_id != model_id,
                    IndexInfo.name.not_like(f"{SHADOW}%"),
                )
            )
        )


@dataclass
class ReembedReport:
    spaces: list[str]
    embedded: int  # vectors embedded by this run
    total: int  # vectors the stale spaces hold
    swapped: bool  # the new vectors are live


def reembed(
    store: Store,
    indices: IndexManager,
    embedder: TextEmbedder,
    progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> ReembedReport:
    """Bring every text space to `embedder`'s model. Stops between batches when asked (call again to
    continue); returns what this run did."""
    spaces = stale_spaces(store, embedder.model_id)
    embedded = 0
    while spaces:
        todo = {space: _missing(store, space) for space in spaces}
        total = _count(store, spaces)
        done = total - sum(len(ids) for ids in todo.values())
        if done == total and _swap(store, indices, spaces, embedder.model_id):
            if progress:
                progress(Progress(STAGE, total, total, None, f"now searching with {embedder.model_id}"))
            return ReembedReport(spaces, embedded, total, True)
        for space, ids in todo.items():
            for start in range(0, len(ids), BATCH):
                if should_stop():
                    indices.save()
                    return ReembedReport(spaces, embedded, total, False)
                embedded += _embed_batch(store, indices, embedder, space, ids[start : start + BATCH])
                done += min(BATCH, len(ids) - start)
                if progress:
                    progress(Progress(STAGE, done, total, None, space))
            indices.save()
    return ReembedReport([], embedded, 0, False)


def _count(store: Store, spaces: list[str]) -> int:
    with store.session() as s:
        return int(s.scalar(select(func.count()).select_from(Vector).where(Vector.space.in_(spaces))) or 0)


def _missing(store: Store, space: str) -> list[int]:
    with store.session() as s:
        return _missing_in(s, space)


def _missing_in(s, space: str) -> list[int]:
    """Units with a vector in `space` but none yet in its shadow; memory entries last (their vectors
    are their members' sum, so the members go first)."""
    shadow = select(Vector.unit_id).where(Vector.space == SHADOW + space)
    rows = s.execute(
        select(Vector.unit_id, Unit.kind)
        .join(Unit, Unit.id == Vector.unit_id)
        .where(Vector.space == space, Vector.unit_id.not_in(shadow))
        .order_by(Vector.unit_id)
    ).all()
    return [uid for uid, kind in rows if kind != ENTRY] + [uid for uid, kind in rows if kind == ENTRY]


def _embed_batch(store: Store, indices: IndexManager, embedder: TextEmbedder, space: str, ids: list[int]) -> int:
    """Embed one batch into the shadow in one transaction. Returns how many texts were embedded."""
    with store.session() as s:
        units = s.scalars(select(Unit).where(Unit.id.in_(ids)).order_by(Unit.id)).all()
        entries = [u for u in units if u.kind == ENTRY and space in _RECORD_FIELD]
        texts = [u for u in units if u not in entries]
        if texts:
            field = _RECORD_FIELD.get(space)
            vectors = embedder.embed_documents([(u.meta or {})[field] if field else u.text for u in texts])
            indices.add(SHADOW + space, [u.id for u in texts], vectors, embedder.model_id, session=s)
        if entries:
            indices.add(SHADOW + space, [u.id for u in entries], _entry_vectors(s, space, entries), embedder.model_id, session=s)
    return len(texts)


def _entry_vectors(s, space: str, entries: list[Unit]) -> np.ndarray:
    """A memory entry's vector: its members' shadow vectors summed (members were embedded first)."""
    members = {u.id: [m["record"] for m in (u.meta or {})["members"]] for u in entries}
    ids, matrix = load_vectors(s, SHADOW + space, [r for rs in members.values() for r in rs])
    row = {int(i): n for n, i in enumerate(ids)}
    return normalise(np.array([matrix[[row[r] for r in members[u.id] if r in row]].sum(axis=0) for u in entries]))


def _swap(store: Store, indices: IndexManager, spaces: list[str], model_id: str) -> bool:
    """Make the shadows the spaces, all in one transaction, if they still cover every unit (a builder
    may have added some since they were counted). Returns whether it swapped."""
    with store.session() as s:
        # A write first: the transaction holds the write lock before it reads what it checks.
        s.execute(update(IndexInfo).where(IndexInfo.name.in_(spaces)).values(count=IndexInfo.count))
        if any(_missing_in(s, space) for space in spaces):
            return False
        for space in spaces:
            shadow = SHADOW + space
            s.execute(delete(Vector).where(Vector.space == space))
            s.execute(update(Vector).where(Vector.space == shadow).values(space=space))
            dim = s.get_one(IndexInfo, shadow).dim
            s.execute(
                update(IndexInfo).where(IndexInfo.name == space).values(model_id=model_id, dim=dim, count=0, file="", sha256="")
            )
            s.execute(delete(IndexInfo).where(IndexInfo.name == shadow))
        _entry_sums(s, [space for space in spaces if space in _RECORD_FIELD])
    for space in spaces:
        indices.drop(SHADOW + space)  # its rows moved; this drops its file and cached index
        indices.rebuild(space)
    return True


def _entry_sums(s, spaces: list[str]) -> None:
    """Keep memory entries' stored object/action sums (which a records build extends) in the new model."""
    if not spaces:
        return
    for state in s.scalars(select(MemoryEntryState)):
        unit = s.get(Unit, state.unit_id)
        members = [m["record"] for m in unit.meta["members"]]
        for space in spaces:
            _, matrix = load_vectors(s, space, members)
            total = to_bytes(matrix.astype(np.float64).sum(axis=0))
            if space == OBJECT_SPACE:
                state.object_sum = total
            else:
                state.action_sum = total
