"""Who was there: the faces the library has seen, each footage's face sightings, and the changes a person
makes to faces (name, merge, forget).

What is stored (migration 8):
- `face_sighting`: one face found in one keyframe (clip, time, box, frame size, detector score) with its
  print (128 float32) and the face it was matched to;
- `face`: one row per face seen anywhere, with its centroid (the mean of its sightings' prints, so a
  rerun of one footage or a merge recomputes it exactly) and the name a person gave it.

A footage's sightings are grouped into people and the groups joined to the library's faces by the rules
of `perception.face_groups` (both at `perception.faces.SAME_PERSON`), so a later import finds the
faces of earlier footage. The prints are kept per sighting, unlike a voice's (whose turns keep none),
because a face's centroid is the mean of few sightings and a merge or a rerun must recompute it exactly.

A named face's name is shown in the captions of the clips it was seen in ("Ana is in view.",
`names_in_clips`), so naming, merging or forgetting a face brings those moments' memories up to date
(`pipeline.faces`, through `spans_of`); an unnamed face shows nothing ("Face 3" would read like a name).

Forgetting a face deletes its print and name: the face row, and the print of every sighting of it (the
sightings stay, with no print and no face: someone was there). The caller purges the freed pages.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from egodesk.memory.people import PeopleError, Spans, check_name
from egodesk.memory.schema import Face, FaceSighting, Footage
from egodesk.perception.face_groups import group, match

FACE_PREFIX = "F"  # a face's id as people write it ("F3"), beside the voices' plain numbers


@dataclass(frozen=True)
class Sighting:
    """A face found in a keyframe, as the faces stage hands it over: the clip, seconds into the footage,
    its box (left, top, right, bottom) in a frame of `frame` (width, height) pixels, score and print."""

    clip_id: int
    offset: float
    box: tuple[int, int, int, int]
    frame: tuple[int, int]
    score: float
    vector: np.ndarray


@dataclass
class FaceInfo:
    id: int
    name: str | None
    label: str  # the name, else "Face N"
    footage: int  # how many footage it is seen in
    sightings: int  # how many keyframes it is seen in
    # Its best sighting, to show: (footage id, seconds into it, left, top, right, bottom, frame width, height).
    best: tuple[int, float, int, int, int, int, int, int] | None = None


def _blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, np.float32).tobytes()


def _vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, np.float32)


def label(face_id: int, name: str | None) -> str:
    return name or f"Face {face_id}"


def _refresh(session: Session, face_ids: set[int]) -> None:
    """Recompute the centroid and counts of `face_ids` from their sightings; an unnamed face left with
    none is deleted (a named one keeps its last print, to be recognised again)."""
    session.flush()
    for face_id in face_ids:
        face = session.get(Face, face_id)
        if face is None:
            continue
        rows = session.execute(
            select(FaceSighting.vector, FaceSighting.footage_id).where(
                FaceSighting.face_id == face_id, FaceSighting.vector.is_not(None)
            )
        ).all()
        if not rows:
            if face.name is None:
                session.delete(face)
            else:
                face.sightings = face.count = 0
            continue
        face.centroid = _blob(np.mean([_vector(v) for v, _ in rows if v is not None], axis=0))
        face.sightings = len(rows)
        face.count = len({footage for _, footage in rows})
    session.flush()


def store_footage(session: Session, footage_id: int, sightings: list[Sighting]) -> int:
    """Replace a footage's sightings with `sightings`, grouping them into people and matching the groups
    to the library's faces (new faces where none is near). Returns the number of sightings stored."""
    origin = session.get_one(Footage, footage_id).start_ts
    before = faces_in(session, footage_id)
    session.execute(delete(FaceSighting).where(FaceSighting.footage_id == footage_id))
    _refresh(session, before)
    labels = group(np.array([s.vector for s in sightings], np.float32)) if sightings else []
    groups = sorted(set(labels))
    centroids = [np.mean([s.vector for s, g in zip(sightings, labels) if g == k], axis=0) for k in groups]
    known = session.scalars(select(Face).where(Face.centroid.is_not(None)).order_by(Face.id)).all()
    joined = match(centroids, [_vector(f.centroid) for f in known if f.centroid is not None])
    face_of: dict[int, int] = {}
    for k, found in zip(groups, joined):
        if found is None:
            face = Face(centroid=_blob(centroids[k]), sightings=0, count=0)
            session.add(face)
            session.flush()
            face_of[k] = face.id
        else:
            face_of[k] = known[found].id
    session.add_all(
        FaceSighting(
            footage_id=footage_id,
            clip_id=s.clip_id,
            offset=s.offset,
            ts=origin + s.offset,
            left=s.box[0],
            top=s.box[1],
            right=s.box[2],
            bottom=s.box[3],
            frame_width=s.frame[0],
            frame_height=s.frame[1],
            score=s.score,
            vector=_blob(s.vector),
            face_id=face_of[g],
        )
        for s, g in zip(sightings, labels)
    )
    _refresh(session, set(face_of.values()))
    return len(sightings)


def names_in_clips(session: Session, footage_id: int) -> dict[int, list[str]]:
    """The named faces seen in each clip of a footage: clip id -> names, first seen first (what its
    caption says is in view)."""
    rows = session.execute(
        select(FaceSighting.clip_id, Face.name)
        .join(Face, Face.id == FaceSighting.face_id)
        .where(FaceSighting.footage_id == footage_id, Face.name.is_not(None))
        .order_by(FaceSighting.ts, FaceSighting.id)
    ).all()
    out: dict[int, list[str]] = defaultdict(list)
    for clip_id, name in rows:
        if name and name not in out[clip_id]:
            out[clip_id].append(name)
    return dict(out)


def spans_of(session: Session, face_ids: set[int]) -> Spans:
    """Where faces `face_ids` were seen: footage id -> the sightings' times (as zero-length spans), the
    moments whose captions show their names."""
    out: Spans = defaultdict(list)
    rows = session.execute(select(FaceSighting.footage_id, FaceSighting.ts).where(FaceSighting.face_id.in_(face_ids)))
    for footage_id, ts in rows:
        out[footage_id].append((ts, ts))
    return dict(out)


def faces_in(session: Session, footage_id: int) -> set[int]:
    rows = session.scalars(select(FaceSighting.face_id).where(FaceSighting.footage_id == footage_id).distinct())
    return {face_id for face_id in rows if face_id is not None}


def footage_forgotten(session: Session, face_ids: set[int]) -> None:
    """After a footage or a range of it is forgotten (its sightings gone with its clips): the faces it
    was seen in (`face_ids`, taken before) are recomputed from their other sightings."""
    _refresh(session, face_ids)


def faces(session: Session) -> list[FaceInfo]:
    """Every face, the most seen first, each with its best sighting (the highest detector score)."""
    best: dict[int, tuple] = {}
    rows = session.execute(
        select(
            FaceSighting.face_id,
            FaceSighting.footage_id,
            FaceSighting.offset,
            FaceSighting.left,
            FaceSighting.top,
            FaceSighting.right,
            FaceSighting.bottom,
            FaceSighting.frame_width,
            FaceSighting.frame_height,
        )
        .where(FaceSighting.face_id.is_not(None))
        .order_by(FaceSighting.score.desc(), FaceSighting.id)
    ).all()
    for face_id, *where in rows:
        if face_id is not None:
            best.setdefault(face_id, tuple(where))
    out = [
        FaceInfo(f.id, f.name, label(f.id, f.name), f.count, f.sightings, best.get(f.id)) for f in session.scalars(select(Face))
    ]
    return sorted(out, key=lambda f: (-f.sightings, f.id))


def _face(session: Session, face_id: int) -> Face:
    face = session.get(Face, face_id)
    if face is None:
        raise PeopleError(f"there is no face {FACE_PREFIX}{face_id} in this library (see `egodesk people list`)")
    return face


def rename(session: Session, face_id: int, name: str) -> None:
    """Name a face (the rules of a voice's name: `people.check_name`); not another face's name."""
    name = check_name(name)
    face = _face(session, face_id)
    other = session.scalar(select(Face.id).where(Face.id != face_id, func.lower(Face.name) == name.lower()))
    if other is not None:
        raise PeopleError(
            f"face {FACE_PREFIX}{other} is already called {name}: merge them "
            f"(`egodesk people merge {FACE_PREFIX}{other} {FACE_PREFIX}{face_id}`)"
        )
    face.name = name
    session.flush()


def merge(session: Session, into: int, other: int) -> None:
    """Make face `other` part of face `into` (one person seen as two); `into` keeps its name, or takes
    `other`'s if it has none."""
    if into == other:
        raise PeopleError(f"face {FACE_PREFIX}{into} cannot be merged with itself")
    keep, gone = _face(session, into), _face(session, other)
    name = keep.name or gone.name
    session.execute(update(FaceSighting).where(FaceSighting.face_id == other).values(face_id=into))
    session.execute(delete(Face).where(Face.id == other))
    keep.name = name
    _refresh(session, {into})


def forget_face(session: Session, face_id: int) -> int:
    """Delete a face's print and name: the face row and the print of each of its sightings (which stay,
    with no face). Returns how many sightings lost their face."""
    face = _face(session, face_id)
    result = session.execute(update(FaceSighting).where(FaceSighting.face_id == face_id).values(face_id=None, vector=None))
    session.delete(face)
    session.flush()
    return result.rowcount or 0  # type: ignore[attr-defined]
