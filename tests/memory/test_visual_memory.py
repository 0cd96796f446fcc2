"""Visual memory: frame and clip units from keyframes, text queries through tag names, image queries
through features, idempotent rebuilds."""

from __future__ import annotations

import numpy as np
from sqlalchemy import select

from egodesk.memory.indices import IndexManager
from egodesk.memory.store import Keyframe, Unit
from egodesk.memory.vectors import load_vectors
from egodesk.memory.visual import (
    CLIP,
    FRAME,
    LABELS_FILE,
    MODEL_ID,
    TEXT_SPACE,
    LabelIndex,
    SparseProbs,
    build_visual,
    label_scores,
    label_vectors,
    similar_frames,
)

SCENES = [
    [["umbrella", 0.81], ["folding chair", 0.09]],
    [["espresso", 0.9], ["coffee mug", 0.05]],
    [["laptop", 0.7], ["notebook", 0.2]],
    [["dining table", 0.6], ["plate", 0.3]],
]


def test_label_scores_dense_and_sparse_agree():
    names = np.eye(3, dtype=np.float32)
    probs = np.array([[0.9, 0.1, 0.0], [0.0, 0.2, 0.8]], dtype=np.float32)
    query = np.array([0.0, 0.0, 2.0], dtype=np.float32)
    dense = label_scores(query, names, probs)
    np.testing.assert_allclose(dense, [0.0, 0.8])
    sparse = SparseProbs(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 2]), np.array([0.9, 0.1, 0.2, 0.8], dtype=np.float32), 2)
    np.testing.assert_allclose(label_scores(query, names, sparse), dense)


def test_build_visual_and_search(store, lib_paths, embedder, make_video):
    footage = make_video(SCENES)
    indices = IndexManager(store, lib_paths.indices)
    report = build_visual(store, indices, embedder, footage)
    assert (report.frames_added, report.clips_added, report.kept) == (8, 4, 0)
    assert indices.count("visual-frame") == 8 and indices.count("visual-clip") == 4
    assert indices.model_id("visual-frame") == MODEL_ID and indices.dim("visual-frame") == 1280
    assert indices.count(TEXT_SPACE) == 12 and indices.model_id(TEXT_SPACE) == embedder.model_id
    with store.session() as s:
        frames = s.scalars(select(Unit).where(Unit.kind == FRAME).order_by(Unit.id)).all()
        clips = s.scalars(select(Unit).where(Unit.kind == CLIP).order_by(Unit.id)).all()
        keyframes = {k.id: k for k in s.scalars(select(Keyframe))}
    assert all(u.view == "visual" for u in frames + clips)
    first = frames[0]
    assert first.text == "umbrella, folding chair" and first.meta["labels"][0] == ["umbrella", 0.81]
    assert first.meta["ts"] == keyframes[first.meta["keyframe_id"]].ts
    with store.session() as s:
        _, text_vector = load_vectors(s, TEXT_SPACE, [first.id])
    np.testing.assert_allclose(text_vector[0], embedder.embed_documents([first.text])[0], atol=1e-6)
    assert (first.start_ts, first.end_ts) == (clips[0].start_ts, clips[0].end_ts)
    assert clips[1].meta["labels"][0] == ["espresso", 0.9]

    labels = LabelIndex.load(store, embedder, lib_paths.indices)
    assert (lib_paths.indices / LABELS_FILE).exists()
    hits = labels.search(embedder.embed_queries(["where did I leave my umbrella?"])[0], 3)
    assert hits[0][0] in {frames[0].id, frames[1].id} and hits[0][1] > hits[2][1]
    coffee = labels.search(embedder.embed_queries(["when did I drink coffee?"])[0], 2)
    assert {u for u, _ in coffee} == {frames[2].id, frames[3].id}
    only = labels.search(embedder.embed_queries(["umbrella"])[0], 5, allowed_ids=[frames[6].id, frames[7].id])
    assert {u for u, _ in only} == {frames[6].id, frames[7].id}
    clip_hits = LabelIndex.load(store, embedder, lib_paths.indices, kind=CLIP).search(embedder.embed_queries(["a laptop"])[0], 1)
    assert clip_hits[0][0] == clips[2].id

    feature = np.frombuffer(keyframes[frames[4].meta["keyframe_id"]].feature, dtype=np.float32)
    similar = similar_frames(indices, feature, 1, exclude_ids=[frames[4].id])
    assert similar[0][0] == frames[5].id  # the other keyframe of the same clip


def test_label_vectors_cached_once(tmp_path, embedder):
    class Counting:
        model_id, dim, calls = embedder.model_id, embedder.dim, 0

        def embed_documents(self, texts):
            Counting.calls += len(texts)
            return embedder.embed_documents(texts)

    path = tmp_path / LABELS_FILE
    first = label_vectors(Counting(), ["umbrella", "laptop"], path)
    again = label_vectors(Counting(), ["laptop", "umbrella", "plate"], path)
    assert Counting.calls == 3
    np.testing.assert_allclose(again[1], first[0])


def test_rebuild_visual_is_idempotent(store, lib_paths, embedder, make_video):
    footage = make_video(SCENES)
    indices = IndexManager(store, lib_paths.indices)
    build_visual(store, indices, embedder, footage)
    again = build_visual(store, indices, embedder, footage)
    assert (again.frames_added, again.clips_added, again.kept, again.removed) == (0, 0, 12, 0)
    with store.session() as s:
        kf = s.scalars(select(Keyframe).order_by(Keyframe.id)).first()
        kf.labels = [["tennis ball", 0.9]]
    changed = build_visual(store, indices, embedder, footage)
    assert (changed.frames_added, changed.clips_added, changed.removed) == (1, 1, 2)
    assert indices.count("visual-frame") == 8 and indices.count("visual-clip") == 4 and indices.count(TEXT_SPACE) == 12
    indices.drop(TEXT_SPACE)  # a library built before the space existed: a rerun fills it in
    build_visual(store, indices, embedder, footage)
    assert indices.count(TEXT_SPACE) == 12
