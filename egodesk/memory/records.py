"""Imprint's interaction records and their online compression into memory entries.

The LLM reads a batch of clips (caption + transcript, the wearer's name prepended as the paper does)
and writes zero or more records per clip through a JSON schema: {persons, action, object, tool,
location, said, attributes}; start and end are the clip's. The paper keeps speech verbatim: the reply
names the transcript line a record comes from (`said`, its number) and the record takes that line as it
is, instead of the model copying it out token by token (on LoCoMo's dialogue, most of the output).
Each record becomes a Unit kind="record" (text "I take plate", meta = its fields and what compression
decided), with vectors of its object and of its action in spaces "record-object" and "record-action".
Records then stream, in time order, through `consolidation.OnlineCompressor`: kept records are
consolidated into Units kind="memory-entry" (parent of their member records; meta lists every member
with its times, in order), indexed in the same two spaces by the mean of their members' object and
action vectors.

`build_records` is resumable and idempotent (see `llm_batches`): one transaction per batch holds its
records, the entries they changed, the prototypes, the compressor's history and the progress mark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from egodesk.core.settings import Settings
from egodesk.core.types import Progress
from egodesk.memory.consolidation import CompressionParams, Decision, Entries, OnlineCompressor, Prototypes, normalise
from egodesk.memory.indices import IndexManager
from egodesk.memory.llm_batches import ClipText, embed_documents, halves_of_failed, load_prompt, run_batches
from egodesk.memory.record_tables import BuildProgress, EventPrototype, MemoryEntryState, from_bytes, to_bytes
from egodesk.memory.store import Store, Unit
from egodesk.perception.llm import JSON_RETRIES, LLMError, chat_json

BUILDER = "imprint"
RECORD, ENTRY = "record", "memory-entry"
OBJECT_SPACE, ACTION_SPACE = "record-object", "record-action"
RECORDS_PER_CLIP = 3  # the schema's cap on records per clip (a small model can loop otherwise)
TOKENS_PER_CLIP = 64  # generation budget per clip in a batch
TOKENS_PER_SPOKEN_CLIP = 96  # a clip with speech: more records (who said what), each pointing at its line
SELF_WORDS = {"i", "me", "my", "myself", "wearer", "the wearer", "camera wearer", "the camera wearer"}
_TEXT_LIMITS = {"action": 40, "object": 60, "tool": 40, "location": 40}
SPEECH_CHARS = 200  # a quoted line is cut here: records and their entries stay short in the reasoner's context


@dataclass
class Record:
    clip_id: int
    start: float
    end: float
    persons: list[str]
    action: str
    object: str
    tool: str = ""
    location: str = ""
    speech: str = ""
    attributes: list[str] = field(default_factory=list)

    def sentence(self) -> str:
        """A readable sentence: "I take plate", "Tasha ask for salt: "Pass me the salt"" """
        words = [" and ".join(self.persons), self.action, self.object]
        if self.tool:
            words.append(f"with {self.tool}")
        if self.location:
            words.append(f"at {self.location}")
        text = " ".join(w for w in words if w)
        return f'{text}: "{self.speech}"' if self.speech else text

    @classmethod
    def from_unit(cls, unit: Unit) -> Record:
        """The record a stored unit holds: its times, and its fields from the unit's meta."""
        meta = unit.meta
        return cls(
            unit.clip_id,
            unit.start_ts,
            unit.end_ts,
            meta["persons"],
            meta["action"],
            meta["object"],
            meta["tool"],
            meta["location"],
            meta["speech"],
            meta["attributes"],
        )

    def fields(self) -> dict[str, Any]:
        return {
            "persons": self.persons,
            "action": self.action,
            "object": self.object,
            "tool": self.tool,
            "location": self.location,
            "speech": self.speech,
            "attributes": self.attributes,
        }


# ------------------------------------------------------------------------------------- extraction


def record_schema(n_clips: int, speech_lines: int = 0) -> dict:
    """One record per item; `id` is an enum of the batch's entry numbers, `said` (only when the batch
    has speech) of the speech line numbers of its most talkative entry. Strings are capped when parsed,
    not in the schema: a bounded repetition in a llama.cpp grammar costs ~3.5x the sampling CPU (measured
    with llm-test on 6 epic-dev narrations, same reply)."""
    text = {"type": "string"}
    short_list = {"type": "array", "items": text, "maxItems": 4}
    item = {
        "type": "object",
        "properties": {
            "id": {"enum": list(range(1, n_clips + 1))},
            "persons": short_list,
            "action": text,
            "object": text,
            "tool": text,
            "location": text,
            "attributes": short_list,
        },
        "required": ["id", "action", "object"],
    }  # persons left out = the wearer alone (saves output tokens)
    if speech_lines:
        item["properties"]["said"] = {"enum": list(range(1, speech_lines + 1))}
    return {
        "type": "object",
        "properties": {"records": {"type": "array", "items": item, "maxItems": RECORDS_PER_CLIP * n_clips}},
        "required": ["records"],
    }


def record_messages(clips: list[ClipText], wearer: str) -> list[dict[str, str]]:
    entries = "\n".join(f"{i}. {clip.render(wearer, numbered=True)}" for i, clip in enumerate(clips, start=1))
    return [
        {"role": "system", "content": load_prompt("records_system.txt", wearer=wearer)},
        {"role": "user", "content": load_prompt("records_user.txt", entries=entries)},
    ]


def _clean(value: Any, cap: int) -> str:
    return " ".join(str(value or "").split())[:cap].strip(" .,;")


def _persons(raw: Any, wearer: str) -> list[str]:
    """Names as given, with the wearer's self-references mapped to the wearer's name, deduplicated."""
    out: list[str] = []
    for name in raw if isinstance(raw, list) else []:
        name = _clean(name, 40)
        name = wearer if name.lower() in SELF_WORDS else name
        if name and name not in out:
            out.append(name)
    return out or [wearer]


def _said(number: Any, clip: ClipText) -> str:
    """The clip's transcript line a record points at, verbatim (capped); "" when it points at none."""
    if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= len(clip.speech):
        return _clean(clip.speech[number - 1], SPEECH_CHARS)
    return ""


def parse_records(data: Any, clips: list[ClipText], wearer: str) -> list[Record]:
    """Valid records from a reply, in entry order; drops items without an action and exact repeats."""
    items = data.get("records", []) if isinstance(data, dict) else []
    out: list[Record] = []
    seen: set[tuple] = set()
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), int) or not 1 <= item["id"] <= len(clips):
            continue
        clip = clips[item["id"] - 1]
        values = {name: _clean(item.get(name), cap) for name, cap in _TEXT_LIMITS.items()}
        values["speech"] = _said(item.get("said"), clip)
        values["action"] = values["action"].lower()
        if not values["action"]:
            continue
        raw_attributes = item.get("attributes")
        attributes = [a for a in (_clean(x, 40) for x in raw_attributes) if a] if isinstance(raw_attributes, list) else []
        record = Record(
            clip.clip_id, clip.start, clip.end, _persons(item.get("persons"), wearer), attributes=attributes, **values
        )
        key = (item["id"], tuple(record.persons), record.action, record.object.lower(), record.speech)
        if key not in seen:
            seen.add(key)
            out.append(record)
    order = {clip.clip_id: i for i, clip in enumerate(clips)}
    return sorted(out, key=lambda r: order[r.clip_id])  # stable: keeps each entry's own record order


def record_budget(clips: list[ClipText]) -> int:
    """Output tokens for a batch's records: more for clips with speech, whose records carry quotes
    (20 s of LoCoMo dialogue overflowed 64 tokens a clip; every overflow costs a whole generation)."""
    return 48 + sum(TOKENS_PER_SPOKEN_CLIP if clip.speech else TOKENS_PER_CLIP for clip in clips)


def extract_records(llm, clips: list[ClipText], wearer: str, failures: list[LLMError] | None = None) -> list[Record]:
    """Records of a batch of clips in one LLM call. A malformed reply of several clips is split into
    two halves at once: under the schema's grammar, a greedy reply is malformed when the token budget
    cut it off, and a sampled retry of the same batch runs into the same budget. A single clip gets
    the sampled retries; one that still fails yields no records, is logged and its error added to
    `failures`."""
    if not clips:
        return []
    try:
        schema = record_schema(len(clips), max(len(c.speech) for c in clips))
        data, _ = chat_json(
            llm,
            record_messages(clips, wearer),
            schema,
            max_tokens=record_budget(clips),
            retries=JSON_RETRIES if len(clips) == 1 else 0,
        )
        return parse_records(data, clips, wearer)
    except LLMError as exc:
        halves = halves_of_failed(clips, exc, "interaction records", failures)
        if halves is None:
            return []
        return [record for half in halves for record in extract_records(llm, half, wearer, failures)]


# ------------------------------------------------------------------------------------ compression


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


def _prepare(llm, embedder, wearer: str) -> Callable[[list[ClipText], list[ClipText]], _Prepared]:
    def prepare(batch: list[ClipText], _all: list[ClipText]) -> _Prepared:
        failures: list[LLMError] = []
        records = extract_records(llm, batch, wearer, failures)
        if len(failures) == len(batch):  # no clip got a usable reply: the LLM fails, not one clip; the
            raise failures[-1]  # build stops before this batch (kept batches stay) and the stage fails
        texts = sorted({t for r in records for t in (r.action, r.object, f"{r.action} {r.object}")})
        return _Prepared(records, dict(zip(texts, embed_documents(embedder, texts))))

    return prepare


def _write(stream: _Stream, index_manager: IndexManager, embedder, footage_id: int, counts: dict[str, int]):
    def write(s: Session, _batch: list[ClipText], prepared: _Prepared, mark: BuildProgress) -> None:
        records = prepared.records
        vec = prepared.vectors
        units = [
            Unit(
                footage_id=footage_id,
                clip_id=r.clip_id,
                kind=RECORD,
                start_ts=r.start,
                end_ts=r.end,
                text=r.sentence(),
                builder=BUILDER,
            )
            for r in records
        ]
        s.add_all(units)
        s.flush()
        if units:
            index_manager.add(
                OBJECT_SPACE, [u.id for u in units], np.array([vec[r.object] for r in records]), embedder.model_id, session=s
            )
            index_manager.add(
                ACTION_SPACE, [u.id for u in units], np.array([vec[r.action] for r in records]), embedder.model_id, session=s
            )
        decisions = _compress(s, stream, index_manager, embedder.model_id, footage_id, records, units, vec)
        mark.state = to_bytes(stream.compressor.history_matrix())
        counts["records"] += len(records)
        counts["kept"] += sum(d.kept for d in decisions)
        counts["entries_created"] += sum(d.entry_created for d in decisions)

    return write


def _compress(
    s: Session,
    stream: _Stream,
    index_manager: IndexManager,
    model_id: str,
    footage_id: int,
    records: list[Record],
    units: list[Unit],
    vec: dict[str, np.ndarray],
) -> list[Decision]:
    """Stream stored record units (in time order) through the compressor: what it decided goes into
    each unit's meta, kept ones into their memory entries (created or extended, with their vectors),
    and the touched prototypes into their rows."""
    comp = stream.compressor
    decisions = [comp.step(vec[f"{r.action} {r.object}"], r.start) for r in records]
    touched: dict[int, list[int]] = {}  # entry seq -> positions of these records
    for pos, (record, unit, d) in enumerate(zip(records, units, decisions)):
        stream.records += 1
        if d.entry >= 0:
            touched.setdefault(d.entry, []).append(pos)
        unit.parent_id = None
        unit.meta = {
            **record.fields(),
            "seq": stream.records,
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
    for seq in sorted(touched):
        entry_unit = _update_entry(s, stream, footage_id, seq, [(records[p], units[p], decisions[p]) for p in touched[seq]], vec)
        for p in touched[seq]:
            units[p].parent_id = entry_unit.id
            units[p].meta = {**units[p].meta, "entry": entry_unit.id}
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
    embedder,
    llm,
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


def recompress(s: Session, index_manager: IndexManager, embedder, footage_id: int, settings: Settings) -> int:
    """Replay the online compression over the footage's stored records, in their order, from an empty
    state: after some records were forgotten, the entries, prototypes and carried-over history become
    what a build without them would have made (no trace of the forgotten ones stays in any running
    sum). The records keep their ids and vectors; the entries are made anew. Returns the entry count."""
    old = s.scalars(select(Unit.id).where(Unit.footage_id == footage_id, Unit.kind == ENTRY, Unit.builder == BUILDER)).all()
    units = s.scalars(
        select(Unit).where(Unit.footage_id == footage_id, Unit.kind == RECORD, Unit.builder == BUILDER).order_by(Unit.id)
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
