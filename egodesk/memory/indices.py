"""Vector indices: one hnswlib index (cosine) per embedding space, labels = unit ids.

SQLite is the source of truth (table `vector`, see `egodesk.memory.vectors`); an index file is a cache
that is checked when loaded and rebuilt from SQLite whenever it cannot be trusted. Each space has:

- `<indices_dir>/<space>.hnsw`: the hnswlib graph, written to a temp name and then renamed;
- `<indices_dir>/<space>.json`: what that file was built from (model id, dim, live/deleted counts);
- a manifest row in table `index_info` (name, dim, metric, model_id, count, file, sha256). The row's
  dim and model id are written with the vectors, in the same transaction, so they are the authority;
  count, file and sha256 describe the last saved file.

Loading checks: file present, sha256 equal to the manifest's (catches garbage and truncation before
hnswlib reads a byte), model id and dim equal between manifest, file and stored vectors, live count
equal to the number of stored vectors (catches a crash between a commit and the next save), and a
sample of stored ids present in the graph. Any failure rebuilds the index from SQLite and logs
"index X: <reason>; rebuilt from N vectors".

Writes are staged on a SQLAlchemy session and reach the in-memory index only when that session
commits, so a rolled-back builder leaves no phantom labels. One lock serialises every index
operation (hnswlib can crash when inserts and searches interleave); a query takes ~1 ms, so searches
queueing behind each other costs little. Call `save()` after a batch of writes, outside any open write
transaction; an unsaved index is simply rebuilt at the next start (and written by the next save).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import hnswlib
import numpy as np
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from egodesk.core.faults import fault_point
from egodesk.memory import indexfile
from egodesk.memory.indexfile import EF_SEARCH, METRIC, Manifest, new_index
from egodesk.memory.schema import IndexInfo, Vector
from egodesk.memory.store import Store
from egodesk.memory.vectors import delete_vectors, load_vectors, normalise, put_vectors, spaces_of, vector_dim, vector_ids

log = logging.getLogger(__name__)

MIN_CAPACITY = 1024
# An allowed set smaller than this share of the space is scored exactly by a dot product over its
# vectors: a filtered graph walk must visit ~k/share nodes (calling back into Python for each), while
# gathering a few thousand rows already read (`_Space.read`) is a millisecond. Larger sets walk the
# graph with the filter.
EXACT_SHARE = 0.1
EXACT_MIN = 2_000
# Deleted labels stay in the graph (hnswlib marks them); compact on save once they outnumber the live.
COMPACT_MIN_DEAD = 1_000
_OPS_KEY = "egodesk.index_ops"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")

Hits = list[tuple[int, float]]


class IndexModelMismatch(ValueError):
    """Vectors from one embedding model were offered to a space that holds another model's vectors."""


@dataclass
class _Space:
    name: str
    dim: int | None = None
    model_id: str = ""
    index: hnswlib.Index | None = None
    live: set[int] = field(default_factory=set)
    dead: set[int] = field(default_factory=set)
    dirty: bool = False
    # Vectors read out of the graph for exact scoring, kept: hnswlib's get_items costs ~25 us per
    # vector, and a scoped question scores the same few hundred units view after view.
    read: dict[int, np.ndarray] = field(default_factory=dict)


class IndexManager:
    """Owns the hnswlib index of every space of one library. Thread-safe; one instance per library.

    Typical builder use (units and vectors commit together; the index follows the commit):

        with store.session() as s:
            s.add_all(units); s.flush()
            indices.add("caption", [u.id for u in units], vectors, embedder.model_id, session=s)
        indices.save()
    """

    def __init__(self, store: Store, indices_dir: Path):
        self.store = store
        self.dir = Path(indices_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._spaces: dict[str, _Space] = {}
        self._lock = threading.RLock()

    @property
    def lexical_dir(self) -> Path:
        """Where retrieval keeps its saved BM25 indices: caches of unit text, like the files here."""
        return self.dir / "lexical"

    # ----------------------------------------------------------------------------------- writes

    def add(self, space: str, unit_ids: Sequence[int], matrix: np.ndarray, model_id: str, session: Session | None = None) -> None:
        """Store the vectors of `unit_ids` in SQLite (replacing any they had in `space`) and add them to
        the space's index, growing its capacity as needed; other labels are untouched (incremental).

        With `session`, the vectors are written in that unit of work and the index changes when it
        commits (nothing on rollback). Without, a session of its own is used and committed.
        Raises IndexModelMismatch when the space holds vectors of another model or dimension: `drop`
        the space and re-embed instead of mixing models."""
        _check_name(space)
        ids = [int(i) for i in unit_ids]
        matrix = normalise(matrix) if len(ids) else np.zeros((0, 0), dtype=np.float32)
        if len(ids) != matrix.shape[0]:
            raise ValueError(f"{len(ids)} unit ids for {matrix.shape[0]} vectors")
        if not ids:
            return
        self._space(space)  # validate (and if needed rebuild) before adding to it
        with self._unit_of_work(session) as s:
            self._claim_manifest(s, space, matrix.shape[1], model_id)
            put_vectors(s, space, ids, matrix)
            self._stage(s, ("add", space, np.asarray(ids, dtype=np.int64), matrix, model_id))

    def remove(self, space: str, unit_ids: Iterable[int], session: Session | None = None) -> None:
        """Delete the units' vectors of `space` from SQLite and mark their labels deleted in its index
        (on commit of `session`, or at once with a session of its own)."""
        ids = np.asarray(sorted({int(i) for i in unit_ids}), dtype=np.int64)
        self._space(space)  # loaded now, so the removal reaches the file at the next save
        with self._unit_of_work(session) as s:
            delete_vectors(s, space, ids.tolist())
            self._stage(s, ("remove", space, ids, None, ""))

    def remove_units(self, unit_ids: Iterable[int], session: Session | None = None) -> dict[str, int]:
        """Remove the units' vectors from every space that holds one (use before deleting the units
        themselves: the vector rows would cascade away, but the index labels would not).
        Returns {space: labels removed}."""
        with self._unit_of_work(session) as s:
            per_space = spaces_of(s, unit_ids)
            for space, ids in per_space.items():
                self._space(space)
                delete_vectors(s, space, ids)
                self._stage(s, ("remove", space, np.asarray(ids, dtype=np.int64), None, ""))
        return {space: len(ids) for space, ids in per_space.items()}

    def drop(self, space: str) -> None:
        """Forget a whole space: its vectors, manifest row and files (e.g. before re-embedding it
        with another model)."""
        with self._lock:
            with self.store.session() as s:
                delete_vectors(s, space)
                row = s.get(IndexInfo, space)
                if row is not None:
                    s.delete(row)
            for path in (self._file(space), self._header(space)):
                path.unlink(missing_ok=True)
            self._spaces.pop(space, None)

    def rebuild(self, space: str) -> int:
        """Rebuild a space's index from its SQLite vectors and save it; returns the vector count."""
        with self._lock:
            sp = self._rebuild(space, "rebuild requested", logging.INFO)
            self._save_space(sp)
            return len(sp.live)

    def save(self) -> None:
        """Write every changed index to disk (temp file + rename) and update its manifest row.
        Compacts an index whose deleted labels outnumber its live ones. Also saves, rebuilt, a space
        whose saved file is behind SQLite (a crash came between a commit and the save, or between a
        file and its manifest row): once here rather than at every later load. Call outside any open
        write transaction on the same database (the manifest update needs the write lock)."""
        with self._lock:
            for space in self._behind():
                self._space(space)  # the load's checks fail and rebuild it: dirty
            for sp in list(self._spaces.values()):
                if sp.dirty:
                    if len(sp.dead) >= max(COMPACT_MIN_DEAD, len(sp.live)):
                        sp = self._rebuild(sp.name, "compacting deleted labels", logging.DEBUG)
                    self._save_space(sp)

    flush = save

    # ------------------------------------------------------------------------------------ reads

    def search(self, space: str, query_vectors: np.ndarray, k: int, allowed_ids: Iterable[int] | None = None) -> list[Hits]:
        """The k nearest units of `space` for each query vector: one list per query of
        (unit_id, cosine similarity), best first. `k` larger than the space (or than the allowed set)
        returns what there is; an unknown or empty space returns empty lists. `allowed_ids` restricts
        the result to those units (a time window, one footage...; a numpy int array is cheapest);
        small sets are scored exactly, large ones through a filtered graph search."""
        queries = np.asarray(query_vectors, dtype=np.float32)
        if queries.ndim == 1:
            queries = queries[None, :]
        empty: list[Hits] = [[] for _ in range(len(queries))]
        with self._lock:
            sp = self._space(space)
            if sp.index is None or not sp.live or k <= 0 or len(queries) == 0:
                return empty
            if queries.shape[1] != sp.dim:
                raise ValueError(f"index {space}: query dim {queries.shape[1]}, index dim {sp.dim}")
            if allowed_ids is None:
                return self._graph_search(sp, queries, min(k, len(sp.live)))
            wanted = allowed_ids.tolist() if isinstance(allowed_ids, np.ndarray) else allowed_ids
            allowed = sp.live.intersection(wanted)
            if not allowed:
                return empty
            if len(allowed) <= max(EXACT_MIN, EXACT_SHARE * len(sp.live)):
                return self._exact(sp, queries, allowed, k)
            return self._graph_search(sp, queries, min(k, len(allowed)), allowed)

    def count(self, space: str) -> int:
        """Live vectors in the space's index (0 for an unknown space)."""
        return len(self._space(space).live)

    def has_vectors(self, space: str) -> bool:
        """Whether the space holds any live vector, without loading its index when it is not loaded
        yet: strategies ask this of every space they might search, and loading one of a big library
        (checksum, graph, labels) costs a large share of a second."""
        with self._lock:
            sp = self._spaces.get(space)
        if sp is not None:
            return bool(sp.live)
        with self.store.session() as s:
            return s.scalar(select(Vector.unit_id).where(Vector.space == space).limit(1)) is not None

    def model_id(self, space: str) -> str:
        return self._space(space).model_id

    def dim(self, space: str) -> int | None:
        return self._space(space).dim

    def spaces(self) -> list[str]:
        """Every space with a manifest row."""
        with self.store.session() as s:
            return sorted(s.scalars(select(IndexInfo.name)).all())

    def file_bytes(self, space: str) -> int:
        """Size of the space's saved index file (0 when none)."""
        path = self._file(space)
        return path.stat().st_size if path.exists() else 0

    # ---------------------------------------------------------------------------- internals

    def _file(self, space: str) -> Path:
        return self.dir / f"{space}.hnsw"

    def _header(self, space: str) -> Path:
        return self.dir / f"{space}.json"

    def _behind(self) -> list[str]:
        """Spaces not loaded here whose manifest row does not describe a saved file of their vectors."""
        with self.store.session() as s:
            saved = {
                name: (file, count) for name, file, count in s.execute(select(IndexInfo.name, IndexInfo.file, IndexInfo.count))
            }
            stored = dict(s.execute(select(Vector.space, func.count()).group_by(Vector.space)).all())
        return [
            space
            for space in sorted(saved.keys() | stored.keys())
            if space not in self._spaces
            and (space not in saved or saved[space][1] != stored.get(space, 0) or (stored.get(space) and not saved[space][0]))
        ]

    def _unit_of_work(self, session: Session | None):
        return nullcontext(session) if session is not None else self.store.session()

    def _claim_manifest(self, s: Session, space: str, dim: int, model_id: str) -> None:
        """Create or check the manifest row in the writing session (same transaction as the vectors)."""
        row = s.get(IndexInfo, space)
        if row is None:
            s.add(IndexInfo(name=space, dim=dim, metric=METRIC, model_id=model_id, count=0, file="", sha256=""))
            return
        holds = vector_dim(s, space) is not None
        if holds and row.model_id and model_id and row.model_id != model_id:
            raise IndexModelMismatch(
                f"index {space} holds vectors of model {row.model_id!r}; got {model_id!r} (drop the space to re-embed)"
            )
        if holds and row.dim != dim:
            raise IndexModelMismatch(f"index {space} holds {row.dim}-d vectors; got {dim}-d")
        row.dim, row.model_id = dim, model_id or row.model_id

    def _stage(self, s: Session, op: tuple) -> None:
        ops = s.info.get(_OPS_KEY)
        if ops is None:
            ops = s.info[_OPS_KEY] = []
            event.listen(s, "after_commit", self._on_commit)
            event.listen(s, "after_rollback", _discard_ops)
        ops.append(op)

    def _on_commit(self, s: Session) -> None:
        ops, s.info[_OPS_KEY] = s.info.get(_OPS_KEY, []), []
        with self._lock:
            for kind, space, ids, matrix, model_id in ops:
                try:
                    if kind == "add":
                        self._apply_add(space, ids, matrix, model_id)
                    else:
                        self._apply_remove(space, ids)
                except Exception:  # the rows are committed; the cache is rebuilt from them next time
                    log.exception("index %s: could not apply a committed %s; it will be rebuilt", space, kind)
                    self._spaces.pop(space, None)

    def _apply_add(self, space: str, ids: np.ndarray, matrix: np.ndarray, model_id: str) -> None:
        sp = self._spaces.get(space)
        if sp is None:  # never loaded here: the next access loads it and sees these rows
            return
        sp.model_id = model_id or sp.model_id
        if sp.index is None:
            sp.dim = matrix.shape[1]
            sp.index = new_index(sp.dim, max(MIN_CAPACITY, 2 * len(ids)))
        fresh = sum(1 for i in ids.tolist() if i not in sp.live and i not in sp.dead)
        needed = sp.index.element_count + fresh
        if needed > sp.index.get_max_elements():
            sp.index.resize_index(max(needed, 2 * sp.index.get_max_elements()))
        sp.index.add_items(matrix, ids)  # an existing label is updated (and un-deleted) in place
        for label in ids.tolist():
            sp.read.pop(label, None)
        sp.live.update(ids.tolist())
        sp.dead.difference_update(ids.tolist())
        sp.dirty = True

    def _apply_remove(self, space: str, ids: np.ndarray) -> None:
        sp = self._spaces.get(space)
        if sp is None or sp.index is None:
            return
        for label in ids.tolist():
            sp.read.pop(label, None)
            if label in sp.live:
                sp.index.mark_deleted(label)
                sp.live.remove(label)
                sp.dead.add(label)
                sp.dirty = True

    def _space(self, space: str) -> _Space:
        with self._lock:
            sp = self._spaces.get(space)
            if sp is None:
                sp = self._spaces[space] = self._load(space)
            return sp

    def _load(self, space: str) -> _Space:
        with self.store.session() as s:
            row = s.get(IndexInfo, space)
            manifest = None if row is None else Manifest(row.dim, row.model_id, row.count, row.file, row.sha256)
            ids = vector_ids(s, space)
            stored_dim = vector_dim(s, space)
        if manifest is None and not len(ids):
            return _Space(space)
        if manifest is None:
            return self._rebuild(space, "no manifest row", logging.WARNING)
        if not manifest.file:  # committed vectors, never saved: an interrupted first build
            return self._rebuild(space, "never saved", logging.INFO if len(ids) else logging.DEBUG)
        reason, index, dead = indexfile.verify(self.dir / manifest.file, self._header(space), manifest, ids, stored_dim)
        if reason:
            return self._rebuild(space, reason, logging.WARNING)
        return _Space(space, dim=manifest.dim, model_id=manifest.model_id, index=index, live=set(ids.tolist()), dead=set(dead))

    def _rebuild(self, space: str, reason: str, level: int) -> _Space:
        with self.store.session() as s:
            ids, matrix = load_vectors(s, space)
            row = s.get(IndexInfo, space)
            model_id = row.model_id if row is not None else ""
        sp = _Space(space, model_id=model_id, dirty=True)
        if len(ids):
            sp.dim = matrix.shape[1]
            sp.index = new_index(sp.dim, max(MIN_CAPACITY, int(len(ids) * 1.25)))
            sp.index.add_items(matrix, ids)
            sp.live = set(ids.tolist())
        log.log(level, "index %s: %s; rebuilt from %d vectors", space, reason, len(ids))
        self._spaces[space] = sp
        return sp

    def _save_space(self, sp: _Space) -> None:
        path = self._file(sp.name)
        header = {"model_id": sp.model_id, "dim": sp.dim, "live": len(sp.live), "dead": sorted(sp.dead)}
        sha = indexfile.write(sp.index, path, self._header(sp.name), header)
        fault_point(f"index-save:{sp.name}")  # new file, old manifest row: the next load must rebuild
        with self.store.session() as s:
            row = s.get(IndexInfo, sp.name)
            if row is None:
                row = IndexInfo(name=sp.name, dim=sp.dim or 0, metric=METRIC, model_id=sp.model_id)
                s.add(row)
            row.dim = sp.dim or row.dim
            row.count, row.file, row.sha256 = len(sp.live), path.name if sp.index is not None else "", sha
        sp.dirty = False

    def _graph_search(self, sp: _Space, queries: np.ndarray, k: int, allowed: set[int] | None = None) -> list[Hits]:
        index = sp.index
        assert index is not None  # the callers search only loaded spaces
        index.set_ef(max(EF_SEARCH, k))
        try:
            if allowed is None:
                labels, dists = index.knn_query(queries, k=k, num_threads=1)
            else:
                labels, dists = index.knn_query(queries, k=k, num_threads=1, filter=allowed.__contains__)
        except RuntimeError:  # the graph walk found fewer than k (heavy deletions, a tight filter)
            return self._exact(sp, queries, sp.live if allowed is None else allowed, k)
        return [[(int(label), float(1.0 - d)) for label, d in zip(row_l, row_d)] for row_l, row_d in zip(labels, dists)]

    def _exact(self, sp: _Space, queries: np.ndarray, allowed: set[int], k: int) -> list[Hits]:
        """Exact cosine top-k over the allowed live units. Their vectors come from the graph itself
        (hnswlib keeps cosine vectors unit length), each read once (`_Space.read`): reading the whole
        space from SQLite first cost seconds on a big library's first question."""
        ids = np.fromiter(allowed, dtype=np.int64, count=len(allowed))  # live labels only: callers intersect with sp.live
        if not len(ids):
            return [[] for _ in range(len(queries))]
        unread = [label for label in ids.tolist() if label not in sp.read]
        if unread:
            assert sp.index is not None  # live labels exist only in a loaded space
            sp.read.update(zip(unread, np.asarray(sp.index.get_items(unread), dtype=np.float32)))
        vectors = np.stack([sp.read[label] for label in ids.tolist()])
        norms = np.linalg.norm(queries, axis=1, keepdims=True)
        sims = (queries / np.maximum(norms, 1e-12)) @ vectors.T
        k = min(k, len(ids))
        out: list[Hits] = []
        for row in sims:
            top = np.argpartition(-row, k - 1)[:k] if k < len(row) else np.arange(len(row))
            top = top[np.argsort(-row[top], kind="stable")]
            out.append([(int(ids[i]), float(row[i])) for i in top])
        return out


def _discard_ops(s: Session) -> None:
    s.info[_OPS_KEY] = []


def _check_name(space: str) -> None:
    if not _NAME.match(space):
        raise ValueError(f"bad index name {space!r}: lower-case letters, digits, '-' or '_', at most 32")
