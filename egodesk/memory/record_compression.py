"""Imprint's record memory: interaction records stored and compressed online into memory entries.

`build_records` runs the extraction (`records.extract_records`) over a footage's clips and stores each
record as a Unit kind="record" (text "I take plate", meta = its fields and what compression decided),
with vectors of its object and of its action in spaces "record-object" and "record-action". Records
then stream, in time order, through `consolidation.OnlineCompressor` (the numbers; this module keeps
their database side): kept records are consolidated into Units kind="memory-entry" (parent of their
member records; meta lists every member with its times, in order), indexed in the same two spaces by
the mean of their members' object and action vectors.

`build_records` is resumable and idempotent (see `llm_batches`): one transaction per batch holds its
records, the entries they changed, the prototypes, the compressor's history and the progress mark.
`recompress` replays the compression over the stored records after some were forgotten or rewritten,
`rebuild_clips` writes the records of a few clips again after a person corrected what they say, and
`growth_report` says how far the records were compressed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from egodesk.core.settings import Settings
from egodesk.core.types import Progress
from egodesk.memory.consolidation import CompressionParams, Decision, Entries, OnlineCompressor, Prototypes, normalise
from egodesk.memory.indices import IndexManager
from egodesk.memory.llm_batches import ClipText, embed_documents, footage_clips, run_batches
from egodesk.memory.record_tables import BuildProgress, EventPrototype, MemoryEntryState, from_bytes, last_done, to_bytes
from egodesk.memory.records import Record, extract_records
from egodesk.memory.schema import Clip
from egodesk.memory.store import Store, Unit
from egodesk.perception.embedder import TextEmbedder
from egodesk.perception.llm import LLMError
from egodesk.perception.llm_base import LLM

BUILDER = "imprint"
RECORD, ENTRY = "record", "memory-entry"
OBJECT_SPACE, ACTION_SPACE = "record-object", "record-action"


@dataclass
class _EntryState:
    unit_id: int
    seq: int
    object_sum: np.ndarray
    action_sum: np.ndarray


class _Stream:
    """The footage's compressor plus the database identities of its prototypes and entries."""

    def __init__(self, s: Session, footage_id: int, params: CompressionParams, dim: int, mark_state: bytes | None):
        protos = s.scalars(
            select(EventPrototype).where(EventPrototype.footage_id == footage_id).order_by(EventPrototype.seq)
        ).all()
        states = s.scalars(
            select(MemoryEntryState).where(MemoryEntryState.footage_id == footage_id).order_by(MemoryEntryState.seq)
        ).all()
        prototypes = Prototypes(
            dim,
            np.array([from_bytes(p.context_sum) for p in protos]).reshape(len(protos), dim),
            [p.count for p in protos],
            [p.last_seen for p in protos],
        )
        entries = Entries(
            dim,
            np.array([from_bytes(e.event_sum) for e in states]).reshape(len(states), dim),
            np.array([from_bytes(e.context_sum) for e in states]).reshape(len(states), dim),
            [e.count for e in states],
        )
        history = list(from_bytes(mark_state).reshape(-1, dim)) if mark_state else []
        self.compressor = OnlineCompressor(params, dim, prototypes, entries, history)
        self.entries = [_EntryState(e.unit_id, e.seq, from_bytes(e.object_sum), from_bytes(e.action_sum)) for e in states]
        self.records = (
            s.scalar(
                select(func.count())
                .select_from(Unit)
                .where(Unit.footage_id == footage_id, Unit.kind == RECORD, Unit.builder == BUILDER)
            )
            or 0
        )


@dataclass
class _Prepared:
    records: list[Record]
    vectors: dict[str, np.ndarray]  # text -> embedding


def _prepare(llm: LLM, embedder: TextEmbedder, wearer: str) -> Callable[[list[ClipText], list[ClipText]], _Prepared]:
    def prepare(batch: list[ClipText], _all: list[ClipText]) -> _Prepared:
        failures: list[LLMError] = []
        records = extract_records(llm, batch, wearer, failures)
        if len(failures) == len(batch):  # no clip got a usable reply: the LLM fails, not one clip; the
            raise failures[-1]  # build stops before this batch (kept batches stay) and the stage fails
        texts = sorted({t for r in records for t in (r.action, r.object, f"{r.action} {r.object}")})
        return _Prepared(records, dict(zip(texts, embed_documents(embedder, texts))))

    return prepare


def _write(stream: _Stream, index_manager: IndexManager, embedder: TextEmbedder, footage_id: int, counts: dict[str, int]):
    def write(s: Session, _batch: list[ClipText], prepared: _Prepared, mark: BuildProgress) -> None:
        records = prepared.records
        vec = prepared.vectors
        units = _store_records(s, index_manager, embedder.model_id, footage_id, records, vec)
        decisions = _compress(s, stream, index_manager, embedder.model_id, footage_id, records, units, vec)
        mark.state = to_bytes(stream.compressor.history_matrix())
        counts["records"] += len(records)
        counts["kept"] += sum(d.kept for d in decisions)
        counts["entries_created"] += sum(d.entry_created for d in decisions)

    return write


def _store_records(
    s: Session, index_manager: IndexManager, model_id: str, footage_id: int, records: list[Record], vec: dict[str, np.ndarray]
) -> list[Unit]:
    """Record units, flushed, with their object and action vectors (what compression decides is set after)."""
    units = [
        Unit(
            footage_id=footage_id,
            clip_id=r.clip_id,
            kind=RECORD,
            start_ts=r.start,
            end_ts=r.end,
            text=r.sentence(),
            builder=BUILDER,
            meta=r.fields(),
        )
        for r in records
    ]
    s.add_all(units)
    s.flush()
    if units:
        ids = [u.id for u in units]
        index_manager.add(OBJECT_SPACE, ids, np.array([vec[r.object] for r in records]), model_id, session=s)
        index_manager.add(ACTION_SPACE, ids, np.array([vec[r.action] for r in records]), model_id, session=s)
    return units


def record_meta(record: Record, d: Decision, seq: int) -> dict[str, Any]:
    """A stored record's meta: its fields and what compression decided of it (`entry` is set once the
    memory entry it joined is written)."""
    return {
        **record.fields(),
        "seq": seq,
        "importance": round(d.importance, 6),
        "kept": d.kept,
        "prototype": d.prototype,
        "prototype_created": d.prototype_created,
        "prototype_similarity": round(d.prototype_similarity, 6),
        "nu": d.nu,
        "dt": round(d.dt_units, 6),
        "n_prototypes": d.n_prototypes,
        "history_used": d.history_used,
        "entry": None,
    }


def _compress(
    s: Session,
    stream: _Stream,
    index_manager: IndexManager,
    model_id: str,
    footage_id: int,
    records: list[Record],
    units: Sequence[Unit],
    vec: dict[str, np.ndarray],
) -> list[Decision]:
    """Stream stored record units (in time order) through the compressor: what it decided goes into
    each unit's meta, kept ones into their memory entries (created or extended, with their vectors),
    and the touched prototypes into their rows."""
    comp = stream.compressor
    decisions = [comp.step(vec[f"{r.action} {r.object}"], r.start) for r in records]
    touched: dict[int, list[int]] = {}  # entry seq -> positions of these records
    metas: list[dict[str, Any]] = []  # each unit's meta, as set here
    for pos, (record, unit, d) in enumerate(zip(records, units, decisions)):
        stream.records += 1
        if d.entry >= 0:
            touched.setdefault(d.entry, []).append(pos)
        unit.parent_id = None
        metas.append(record_meta(record, d, stream.records))
        unit.meta = metas[-1]
    for seq in sorted(touched):
        entry_unit = _update_entry(s, stream, footage_id, seq, [(records[p], units[p], decisions[p]) for p in touched[seq]], vec)
        for p in touched[seq]:
            units[p].parent_id = entry_unit.id
            units[p].meta = {**metas[p], "entry": entry_unit.id}
    s.flush()
    entries = [stream.entries[seq] for seq in sorted(touched)]
    if entries:
        ids = [e.unit_id for e in entries]
        index_manager.add(OBJECT_SPACE, ids, normalise(np.array([e.object_sum for e in entries])), model_id, session=s)
        index_manager.add(ACTION_SPACE, ids, normalise(np.array([e.action_sum for e in entries])), model_id, session=s)
    _save_prototypes(s, stream, footage_id, {d.prototype for d in decisions})
    return decisions


def _update_entry(
    s: Session, stream: _Stream, footage_id: int, seq: int, members: list[tuple[Record, Unit, Any]], vec: dict[str, np.ndarray]
) -> Unit:
    """Create or extend memory entry `seq` with this batch's members (already in time order)."""
    comp_entries = stream.compressor.entries
    if seq < len(stream.entries):
        state = stream.entries[seq]
        unit = s.get(Unit, state.unit_id)
        assert unit is not None and unit.meta is not None  # a state row goes with its entry unit (cascade), written with its meta
        meta = dict(unit.meta)
    else:
        first = members[0][0]
        unit = Unit(
            footage_id=footage_id, clip_id=first.clip_id, kind=ENTRY, start_ts=first.start, end_ts=first.end, builder=BUILDER
        )
        s.add(unit)
        s.flush()
        dim = len(vec[first.object])
        state = _EntryState(unit.id, seq, np.zeros(dim), np.zeros(dim))  # float64 sums, as stored
        stream.entries.append(state)
        meta = {"seq": seq, "members": []}
    members_meta = list(meta["members"])  # a new list: SQLAlchemy sees a changed JSON value only when reassigned
    for record, member, decision in members:
        state.object_sum = state.object_sum + vec[record.object]
        state.action_sum = state.action_sum + vec[record.action]
        members_meta.append(
            {
                "record": member.id,
                "clip": record.clip_id,
                "start": record.start,
                "end": record.end,
                "text": member.text,
                "importance": round(decision.importance, 6),
            }
        )
    meta["members"] = members_meta
    meta["count"] = len(members_meta)
    meta["importance"] = round(float(np.mean([m["importance"] for m in members_meta])), 6)  # aggregated: the mean
    sentences = list(dict.fromkeys(m["text"] for m in members_meta))
    unit.text = "; ".join(sentences)
    unit.start_ts = min(m["start"] for m in members_meta)
    unit.end_ts = max(m["end"] for m in members_meta)
    unit.meta = meta
    row = s.get(MemoryEntryState, unit.id)
    if row is None:
        row = MemoryEntryState(unit_id=unit.id, footage_id=footage_id, seq=seq)
        s.add(row)
    row.event_sum, row.context_sum = to_bytes(comp_entries.event_sums[seq]), to_bytes(comp_entries.context_sums[seq])
    row.object_sum, row.action_sum = to_bytes(state.object_sum), to_bytes(state.action_sum)
    row.count = comp_entries.counts[seq]
    return unit


def _save_prototypes(s: Session, stream: _Stream, footage_id: int, touched: set[int]) -> None:
    protos = stream.compressor.prototypes
    existing = {
        p.seq: p
        for p in s.scalars(
            select(EventPrototype).where(EventPrototype.footage_id == footage_id, EventPrototype.seq.in_(sorted(touched)))
        )
    }
    for seq in sorted(touched):
        row = existing.get(seq) or EventPrototype(footage_id=footage_id, seq=seq)
        row.context_sum, row.count, row.last_seen = to_bytes(protos.sums[seq]), protos.counts[seq], protos.last_seen[seq]
        s.add(row)


# -------------------------------------------------------------------------------------- entry points


def build_records(
    store: Store,
    index_manager: IndexManager,
    embedder: TextEmbedder,
    llm: LLM,
    footage_id: int,
    settings: Settings,
    progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict:
    """Extract, compress and store the footage's interaction records, resuming after the last committed
    batch. Returns counts and timings of this run (records/kept/entries created, clips per second)."""
    params = CompressionParams.from_settings(settings)
    with store.session() as s:
        mark = s.get(BuildProgress, (footage_id, BUILDER))
        stream = _Stream(s, footage_id, params, embedder.dim, mark.state if mark else None)
    counts = {"records": 0, "kept": 0, "entries_created": 0}
    run = run_batches(
        store,
        footage_id,
        BUILDER,
        settings.records_batch_size,
        _prepare(llm, embedder, settings.wearer_name),
        _write(stream, index_manager, embedder, footage_id, counts),
        progress,
        should_stop,
        getattr(llm, "in_flight", 1),
    )
    index_manager.save()
    return {"footage_id": footage_id, **run.as_dict(), **counts}


def clear_records(store: Store, index_manager: IndexManager, footage_id: int) -> None:
    """Forget the footage's records, entries, prototypes and progress (before a rebuild from scratch)."""
    with store.session() as s:
        ids = s.scalars(select(Unit.id).where(Unit.footage_id == footage_id, Unit.builder == BUILDER)).all()
        index_manager.remove_units(ids, session=s)
        s.execute(delete(Unit).where(Unit.id.in_(ids)))
        s.execute(delete(EventPrototype).where(EventPrototype.footage_id == footage_id))
        s.execute(delete(BuildProgress).where(BuildProgress.footage_id == footage_id, BuildProgress.builder == BUILDER))
    index_manager.save()


def recompress(s: Session, index_manager: IndexManager, embedder: TextEmbedder, footage_id: int, settings: Settings) -> int:
    """Replay the online compression over the footage's stored records, in time order, from an empty
    state: after some records were forgotten (or a clip's rewritten), the entries, prototypes and
    carried-over history become what a build of the records now stored would have made (no trace of
    the old ones stays in any running sum). The records keep their ids and vectors; the entries are
    made anew. Returns the entry count."""
    old = s.scalars(select(Unit.id).where(Unit.footage_id == footage_id, Unit.kind == ENTRY, Unit.builder == BUILDER)).all()
    units = s.scalars(  # in time order; a clip's records in the order they were written (rewritten ones come last by id)
        select(Unit)
        .where(Unit.footage_id == footage_id, Unit.kind == RECORD, Unit.builder == BUILDER)
        .order_by(Unit.start_ts, Unit.id)
    ).all()
    for unit in units:
        unit.parent_id = None  # before the entries go: their deletion would cascade to the members
    s.flush()
    index_manager.remove_units(list(old), session=s)
    s.execute(delete(Unit).where(Unit.id.in_(old)))
    s.execute(delete(EventPrototype).where(EventPrototype.footage_id == footage_id))
    stream = _Stream(s, footage_id, CompressionParams.from_settings(settings), embedder.dim, None)
    stream.records = 0
    records = [Record.from_unit(u) for u in units]
    texts = sorted({t for r in records for t in (r.action, r.object, f"{r.action} {r.object}")})
    vec = dict(zip(texts, embedder.embed_documents(texts))) if texts else {}
    _compress(s, stream, index_manager, embedder.model_id, footage_id, records, units, vec)
    mark = s.get(BuildProgress, (footage_id, BUILDER))
    if mark is not None:
        mark.state = to_bytes(stream.compressor.history_matrix())
    return len(stream.entries)


def rebuild_clips(
    store: Store,
    index_manager: IndexManager,
    embedder: TextEmbedder,
    llm: LLM,
    footage_id: int,
    clip_ids: Sequence[int],
    settings: Settings,
) -> dict:
    """Extract the records of these clips again, as one batch, after a person corrected a line of them,
    and put them in place of the clips' old ones; the rest of the footage's records keep their rows and
    vectors. Compression is a stream over the whole footage, so it is replayed (`recompress`: no LLM,
    the memory entries made anew) when the clips' records changed; records that come out the same
    change nothing. Only clips the build has read (up to its progress mark) are rebuilt: it reads the
    others, corrected, when it gets there. A failure of the LLM raises before anything is written,
    leaving the old records. Returns what it did: clips, records before and after, entries, seconds."""
    started = time.perf_counter()
    wanted = set(clip_ids)
    with store.session() as s:
        done = last_done(s, footage_id, BUILDER)
        read = set(s.scalars(select(Clip.id).where(Clip.footage_id == footage_id, Clip.idx <= done, Clip.id.in_(wanted))))
        batch = [c for c in footage_clips(s, footage_id) if c.clip_id in read]
        old = [
            Record.from_unit(u)
            for u in s.scalars(select(Unit).where(*_of_clips(footage_id, read)).order_by(Unit.start_ts, Unit.id))
        ]
    report = {"clips": len(read), "records_before": len(old), "records": len(old), "changed": False, "entries": None}
    if not read:
        return {**report, "seconds": round(time.perf_counter() - started, 3)}
    failures: list[LLMError] = []
    records = extract_records(llm, batch, settings.wearer_name, failures) if batch else []
    if batch and len(failures) == len(batch):
        raise failures[-1]
    if [(r.clip_id, r.fields()) for r in records] != [(r.clip_id, r.fields()) for r in old]:
        texts = sorted({t for r in records for t in (r.action, r.object)})
        vec = dict(zip(texts, embed_documents(embedder, texts))) if texts else {}
        with store.session() as s:
            stale = list(s.scalars(select(Unit.id).where(*_of_clips(footage_id, read))))
            index_manager.remove_units(stale, session=s)
            s.execute(delete(Unit).where(Unit.id.in_(stale)))
            _store_records(s, index_manager, embedder.model_id, footage_id, records, vec)
            report["entries"] = recompress(s, index_manager, embedder, footage_id, settings)
        index_manager.save()
        report.update(records=len(records), changed=True)
    return {**report, "seconds": round(time.perf_counter() - started, 3)}


def _of_clips(footage_id: int, clip_ids: set[int]) -> list:
    """The conditions that pick the record units of these clips of a footage."""
    return [Unit.footage_id == footage_id, Unit.kind == RECORD, Unit.builder == BUILDER, Unit.clip_id.in_(sorted(clip_ids))]


def growth_report(store: Store, footage_id: int, points: int = 10) -> dict:
    """Memory growth of one footage: raw records vs kept records vs memory entries, overall and as a
    curve over the footage's time (cumulative counts at `points` evenly spaced moments)."""
    with store.session() as s:
        records = s.execute(
            select(Unit.start_ts, Unit.meta)
            .where(Unit.footage_id == footage_id, Unit.kind == RECORD, Unit.builder == BUILDER)
            .order_by(Unit.id)
        ).all()
        prototypes = (
            s.scalar(select(func.count()).select_from(EventPrototype).where(EventPrototype.footage_id == footage_id)) or 0
        )
        entries = (
            s.execute(select(Unit.meta).where(Unit.footage_id == footage_id, Unit.kind == ENTRY, Unit.builder == BUILDER))
            .scalars()
            .all()
        )
    raw = len(records)
    kept = sum(bool((m or {}).get("kept")) for _, m in records)
    founded = sorted(min(x["start"] for x in (m or {}).get("members", [{"start": 0.0}])) for m in entries)
    curve = []
    if records:
        starts = np.array(sorted(t for t, _ in records))
        kept_starts = np.array(sorted(t for t, m in records if (m or {}).get("kept")))
        for t in np.linspace(starts[0], starts[-1], points if raw > 1 else 1):
            curve.append(
                {
                    "t": float(t),
                    "raw": int(np.searchsorted(starts, t, "right")),
                    "kept": int(np.searchsorted(kept_starts, t, "right")),
                    "entries": int(np.searchsorted(np.array(founded), t, "right")),
                }
            )
    return {
        "footage_id": footage_id,
        "raw_records": raw,
        "kept_records": kept,
        "dropped_records": raw - kept,
        "memory_entries": len(entries),
        "prototypes": prototypes,
        "compression": round(raw / len(entries), 3) if entries else None,
        "curve": curve,
    }
