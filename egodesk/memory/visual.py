"""Visual memory (CARVE's visual side) with what runs offline: the tagger's frame features and tags.

- Each keyframe becomes a Unit kind="frame" (view "visual"): its 1280-d feature vector goes into space
  "visual-frame"; its text is its tag names, its meta the tags with their probabilities.
- Each clip becomes a Unit kind="visual-clip": the normalised mean of its keyframes' features (CARVE:
  mean-pooled keyframe embeddings) in space "visual-clip".
- Both also get the text embedder's vector of their tag list in space "visual-text": CARVE re-scores
  the visual candidates a question reaches by that text, and embedding ~36 tag lists per question
  would cost it ~130 ms.
Both carry their clip's interval (the chunk is the retrieval unit; the frame's own time is in meta).

There is no CLIP here, so a text query cannot be compared with image features. It reaches visual
memory through the tag vocabulary instead: `label_scores` = sum over a frame's tags of
cos(query, embedded tag name) x the tag's probability. An image query ("moments that look like this
one") compares features directly: `similar_frames`. Tag names are embedded once per library and kept
in `<indices>/visual-labels.npz`.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sqlalchemy import select

from egodesk.memory.indices import Hits, IndexManager
from egodesk.memory.schema import Clip, Keyframe, Unit, Vector
from egodesk.memory.store import Store
from egodesk.memory.unitsync import sync_units
from egodesk.memory.vectors import normalise
from egodesk.perception.embedder import TextEmbedder

BUILDER = "visual"
VIEW = "visual"
FRAME, CLIP = "frame", "visual-clip"
FRAME_SPACE, CLIP_SPACE, TEXT_SPACE = "visual-frame", "visual-clip", "visual-text"
MODEL_ID = "efficientnet-lite0-features"  # the tagger's pooled features (not comparable with text)
LABELS_FILE = "visual-labels.npz"
CLIP_LABELS = 10  # tags kept on a clip unit (summed over its keyframes)


@dataclass
class VisualReport:
    footage_id: int
    frames_added: int = 0
    clips_added: int = 0
    kept: int = 0
    removed: int = 0
    seconds: float = 0.0

    @property
    def units(self) -> int:
        """Units added by this run (frames and clips)."""
        return self.frames_added + self.clips_added


@dataclass
class SparseProbs:
    """Tag probabilities of n units over a vocabulary, as (row, column, probability) triples."""

    rows: np.ndarray  # int64
    cols: np.ndarray  # int64
    values: np.ndarray  # float32
    n: int


def label_scores(
    query_vec: np.ndarray, label_name_vectors: np.ndarray, frame_label_probs: np.ndarray | SparseProbs
) -> np.ndarray:
    """Text-to-visual relevance of each frame: sum_l cos(query, name_l) * p(l | frame).
    `label_name_vectors` (L, d) unit rows; `frame_label_probs` dense (F, L) or SparseProbs. Returns (F,)."""
    query = np.asarray(query_vec, dtype=np.float32).reshape(-1)
    sims = label_name_vectors @ (query / max(float(np.linalg.norm(query)), 1e-12))
    if isinstance(frame_label_probs, SparseProbs):
        p = frame_label_probs
        return np.bincount(p.rows, weights=p.values * sims[p.cols], minlength=p.n).astype(np.float32)
    return (np.asarray(frame_label_probs, dtype=np.float32) @ sims).astype(np.float32)


def label_vectors(embedder: TextEmbedder, names: list[str], cache_path: Path) -> np.ndarray:
    """Embedded tag names (len(names), d), from the library's cache; names not yet cached (or a cache
    made by another embedder) are embedded now and the cache rewritten atomically."""
    cached: dict[str, np.ndarray] = {}
    if cache_path.exists():
        with np.load(cache_path, allow_pickle=False) as data:
            if str(data["model_id"]) == embedder.model_id:
                cached = dict(zip(data["names"].tolist(), data["vectors"]))
    missing = sorted(set(names) - cached.keys())
    if missing:
        cached.update(zip(missing, embedder.embed_documents(missing)))
        every = sorted(cached)
        tmp = cache_path.with_name(cache_path.name + ".tmp.npz")
        np.savez(tmp, model_id=np.array(embedder.model_id), names=np.array(every), vectors=np.stack([cached[n] for n in every]))
        os.replace(tmp, cache_path)
    return np.stack([cached[n] for n in names]) if names else np.zeros((0, embedder.dim), dtype=np.float32)


class LabelIndex:
    """Text search over visual units (frames or clips) through their tags; rebuild it after a build."""

    def __init__(self, unit_ids: np.ndarray, probs: SparseProbs, name_vectors: np.ndarray):
        self.unit_ids, self.probs, self.name_vectors = unit_ids, probs, name_vectors

    @classmethod
    def load(cls, store: Store, embedder: TextEmbedder, indices_dir: Path, kind: str = FRAME) -> LabelIndex:
        with store.session() as s:
            rows = s.execute(select(Unit.id, Unit.meta).where(Unit.builder == BUILDER, Unit.kind == kind).order_by(Unit.id)).all()
        vocab: dict[str, int] = {}
        triples = [
            (r, vocab.setdefault(name, len(vocab)), p)
            for r, (_, meta) in enumerate(rows)
            for name, p in (meta or {}).get("labels", [])
        ]
        probs = SparseProbs(
            np.array([t[0] for t in triples], dtype=np.int64),
            np.array([t[1] for t in triples], dtype=np.int64),
            np.array([t[2] for t in triples], dtype=np.float32),
            len(rows),
        )
        names = sorted(vocab, key=vocab.__getitem__)
        return cls(
            np.array([r[0] for r in rows], dtype=np.int64), probs, label_vectors(embedder, names, Path(indices_dir) / LABELS_FILE)
        )

    def search(self, query_vec: np.ndarray, k: int, allowed_ids=None) -> Hits:
        """Top-k (unit id, label score), best first; `allowed_ids` restricts the units."""
        if not len(self.unit_ids) or k <= 0:
            return []
        scores = label_scores(query_vec, self.name_vectors, self.probs)
        candidates = np.arange(len(self.unit_ids))
        if allowed_ids is not None:
            candidates = np.flatnonzero(np.isin(self.unit_ids, np.fromiter(allowed_ids, dtype=np.int64)))
        top = candidates[np.argsort(-scores[candidates], kind="stable")[:k]]
        return [(int(self.unit_ids[i]), float(scores[i])) for i in top]


def similar_frames(index_manager: IndexManager, feature: np.ndarray, k: int, exclude_ids=()) -> Hits:
    """Frames that look like `feature` (a tagger feature vector): (unit id, cosine), best first."""
    exclude = {int(i) for i in exclude_ids}
    hits = index_manager.search(FRAME_SPACE, normalise(feature), k + len(exclude))[0]
    return [h for h in hits if h[0] not in exclude][:k]


def build_visual(store: Store, index_manager: IndexManager, embedder: TextEmbedder, footage_id: int) -> VisualReport:
    """Frame and clip units of one footage's keyframes (those with features), in one transaction;
    idempotent (unchanged keyframes are kept). Also caches the embeddings of the tag names used."""
    started = time.perf_counter()
    report = VisualReport(footage_id)
    names: set[str] = set()
    with store.session() as s:
        rows = s.execute(
            select(Keyframe, Clip)
            .join(Clip, Keyframe.clip_id == Clip.id)
            .where(Clip.footage_id == footage_id, Keyframe.feature.is_not(None))
            .order_by(Clip.idx, Keyframe.idx)
        ).all()
        per_clip: dict[int, list[tuple[Keyframe, np.ndarray, str]]] = defaultdict(list)
        clips: dict[int, Clip] = {}
        for kf, clip in rows:
            assert kf.feature is not None  # the query keeps only keyframes with features
            feature = normalise(np.frombuffer(kf.feature, dtype=np.float32))[0]
            digest = hashlib.sha1(
                kf.feature + repr((kf.labels, kf.ts, kf.thumb_path, clip.start_ts, clip.end_ts)).encode()
            ).hexdigest()
            per_clip[clip.id].append((kf, feature, digest))
            clips[clip.id] = clip
            names.update(name for name, _ in kf.labels or [])
        wanted = {f"frame:{kf.id}": d for frames in per_clip.values() for kf, _, d in frames}
        wanted |= {
            f"clip:{cid}": hashlib.sha1("".join(d for *_, d in frames).encode()).hexdigest() for cid, frames in per_clip.items()
        }
        kept, report.removed = sync_units(s, index_manager, footage_id, BUILDER, wanted)
        report.kept = len(kept)
        frame_units, frame_vecs, clip_units, clip_vecs = [], [], [], []
        for cid, frames in per_clip.items():
            clip = clips[cid]
            for kf, feature, digest in frames:
                key = f"frame:{kf.id}"
                if key not in kept:
                    labels = [[str(n), float(p)] for n, p in kf.labels or []]
                    frame_units.append(
                        _unit(
                            footage_id,
                            clip,
                            FRAME,
                            key,
                            digest,
                            labels,
                            keyframe_id=kf.id,
                            ts=kf.ts,
                            offset=kf.offset,
                            thumb=kf.thumb_path,
                        )
                    )
                    frame_vecs.append(feature)
            key = f"clip:{cid}"
            if key not in kept:
                clip_units.append(_unit(footage_id, clip, CLIP, key, wanted[key], _pooled_labels(kf.labels for kf, *_ in frames)))
                clip_vecs.append(np.mean([f for _, f, _ in frames], axis=0))
        s.add_all(frame_units + clip_units)
        s.flush()
        for space, units, vecs in ((FRAME_SPACE, frame_units, frame_vecs), (CLIP_SPACE, clip_units, clip_vecs)):
            if units:
                index_manager.add(space, [u.id for u in units], np.stack(vecs), MODEL_ID, session=s)
        _add_text_vectors(s, index_manager, embedder, footage_id)
        report.frames_added, report.clips_added = len(frame_units), len(clip_units)
    index_manager.save()
    label_vectors(embedder, sorted(names), index_manager.dir / LABELS_FILE)
    report.seconds = time.perf_counter() - started
    return report


def _add_text_vectors(s, index_manager: IndexManager, embedder: TextEmbedder, footage_id: int) -> None:
    """Embed the tag-list text of the footage's visual units that have no vector in TEXT_SPACE: the
    units added now, and those of a library built before the space existed."""
    missing = s.execute(
        select(Unit.id, Unit.text)
        .outerjoin(Vector, (Vector.unit_id == Unit.id) & (Vector.space == TEXT_SPACE))
        .where(Unit.footage_id == footage_id, Unit.builder == BUILDER, Vector.unit_id.is_(None))
        .order_by(Unit.id)
    ).all()
    if missing:
        index_manager.add(
            TEXT_SPACE,
            [uid for uid, _ in missing],
            embedder.embed_documents([text for _, text in missing]),
            embedder.model_id,
            session=s,
        )


def _unit(footage_id: int, clip: Clip, kind: str, key: str, digest: str, labels: list, **meta) -> Unit:
    return Unit(
        footage_id=footage_id,
        clip_id=clip.id,
        kind=kind,
        view=VIEW,
        start_ts=clip.start_ts,
        end_ts=clip.end_ts,
        text=", ".join(name for name, _ in labels),
        builder=BUILDER,
        meta={"key": key, "digest": digest, "labels": labels, **meta},
    )


def _pooled_labels(label_lists) -> list[list]:
    """A clip's tags: each tag's probability averaged over the clip's keyframes, top CLIP_LABELS."""
    lists = list(label_lists)
    total: dict[str, float] = defaultdict(float)
    for labels in lists:
        for name, p in labels or []:
            total[str(name)] += float(p) / max(len(lists), 1)
    return [[n, p] for n, p in sorted(total.items(), key=lambda kv: -kv[1])[:CLIP_LABELS]]
