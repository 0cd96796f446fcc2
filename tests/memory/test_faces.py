"""The faces the library has seen, in a real SQLite library: sightings grouped into people and matched to
the faces of earlier footage, a rerun replacing a footage's sightings, naming, merging and forgetting with
their refusals, the grouping rules themselves, and migration 8.

Her prints are real: dlib's, of the astronaut portrait skimage ships (NASA, public domain) in four copies.
There is no second person's picture the project may ship, so the "other person" is her print moved 0.8
away (further than SAME_PERSON, as two people measured at least 0.41 and mostly 0.64-0.75 apart)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from sqlalchemy import create_engine, insert, select, text

from egodesk.core.manifest import ModelMissing, locate
from egodesk.memory import faces
from egodesk.memory.faces import Sighting
from egodesk.memory.migrations import MIGRATIONS, migrate
from egodesk.memory.people import PeopleError
from egodesk.memory.schema import Clip, Face, FaceSighting, Footage, Job
from egodesk.perception.face_groups import group, match
from egodesk.perception.faces import SAME_PERSON
from tests.memory.conftest import add_footage


@pytest.fixture(scope="module")
def prints() -> dict[str, np.ndarray]:
    try:
        from egodesk.perception.faces import FaceFinder

        finder = FaceFinder(locate("faces"))
    except ModelMissing:
        pytest.skip("the faces model is installed by ./setup.sh")
    from skimage import data

    her = data.astronaut()
    copies = {"her": her, "mirror": her[:, ::-1], "crop": her[40:420, 90:460], "half": cv2.resize(her, (256, 256))}
    found = {name: finder.find(np.ascontiguousarray(im))[0].vector for name, im in copies.items()}
    away = np.random.default_rng(7).normal(size=found["her"].shape).astype(np.float32)
    found["other"] = found["her"] + 0.8 * away / np.linalg.norm(away)
    found["other2"] = found["other"] + 0.02
    return found


def _footage_with_clip(store, name: str, start: float) -> tuple[int, int]:
    footage_id = add_footage(store, name, start=start, duration=30.0)
    with store.session() as s:
        clip = Clip(footage_id=footage_id, idx=0, offset=0.0, start_ts=start, end_ts=start + 30.0)
        s.add(clip)
        s.flush()
        return footage_id, clip.id


def _sighting(clip_id: int, vector: np.ndarray, offset: float = 1.0) -> Sighting:
    return Sighting(clip_id, offset, (10, 20, 110, 120), (848, 480), 1.2, vector)


def _faces_of(store) -> dict[int, Face]:
    with store.session() as s:
        return {f.id: f for f in s.scalars(select(Face))}


def test_sightings_are_grouped_into_people_and_matched_across_footage(store, prints):
    one, clip1 = _footage_with_clip(store, "one", 1000.0)
    two, clip2 = _footage_with_clip(store, "two", 5000.0)
    with store.session() as s:
        stored = faces.store_footage(
            s,
            one,
            [_sighting(clip1, prints["her"]), _sighting(clip1, prints["other"], 2.0), _sighting(clip1, prints["crop"], 3.0)],
        )
    assert stored == 3
    first = _faces_of(store)
    assert sorted(f.sightings for f in first.values()) == [1, 2]  # her twice, the other person once
    with store.session() as s:
        faces.store_footage(s, two, [_sighting(clip2, prints["mirror"]), _sighting(clip2, prints["half"], 5.0)])
        listed = faces.faces(s)
    assert len(_faces_of(store)) == 2  # her again, in the second footage: no new face
    top = listed[0]
    assert (top.label, top.footage, top.sightings) == (f"Face {top.id}", 2, 4)
    assert top.best is not None and top.best[2:] == (10, 20, 110, 120, 848, 480)
    with store.session() as s:
        times = s.scalars(select(FaceSighting.ts).where(FaceSighting.footage_id == two).order_by(FaceSighting.ts)).all()
    assert times == [5001.0, 5005.0]  # wall clock: the footage's start plus the offset


def test_a_rerun_replaces_the_footage_sightings_and_keeps_a_face_seen_elsewhere(store, prints):
    one, clip1 = _footage_with_clip(store, "one", 1000.0)
    two, clip2 = _footage_with_clip(store, "two", 5000.0)
    with store.session() as s:
        faces.store_footage(s, one, [_sighting(clip1, prints["her"]), _sighting(clip1, prints["other"], 2.0)])
        faces.store_footage(s, two, [_sighting(clip2, prints["mirror"])])
    her = next(f.id for f in _faces_of(store).values() if f.count == 2)
    with store.session() as s:
        faces.store_footage(s, one, [])  # rerun: nobody found this time
    left = _faces_of(store)
    assert list(left) == [her] and left[her].count == 1  # the other person (unnamed, seen only there) is gone
    with store.session() as s:
        faces.store_footage(s, one, [_sighting(clip1, prints["crop"])])
    assert list(_faces_of(store)) == [her] and _faces_of(store)[her].count == 2


def test_name_merge_forget_and_their_refusals(store, prints):
    one, clip1 = _footage_with_clip(store, "one", 1000.0)
    with store.session() as s:
        faces.store_footage(s, one, [_sighting(clip1, prints["her"]), _sighting(clip1, prints["other"], 2.0)])
    her, other = sorted(_faces_of(store))
    with store.session() as s:
        faces.rename(s, her, "  Eileen   Collins ")
        with pytest.raises(PeopleError, match="already called eileen collins: merge them"):
            faces.rename(s, other, "eileen collins")
        for bad, reason in (("", "empty"), ("a: b", "colon"), ("me", "wearer")):
            with pytest.raises(PeopleError, match=reason):
                faces.rename(s, other, bad)
        with pytest.raises(PeopleError, match="no face F99"):
            faces.rename(s, 99, "X")
        with pytest.raises(PeopleError, match="itself"):
            faces.merge(s, her, her)
    assert _faces_of(store)[her].name == "Eileen Collins"
    with store.session() as s:
        faces.merge(s, other, her)  # her sightings join the other face, which takes her name
    [merged] = _faces_of(store).values()
    assert (merged.id, merged.name, merged.sightings) == (other, "Eileen Collins", 2)
    with store.session() as s:
        assert faces.forget_face(s, other) == 2
        rows = s.execute(select(FaceSighting.face_id, FaceSighting.vector, FaceSighting.left)).all()
    assert _faces_of(store) == {}
    assert rows == [(None, None, 10), (None, None, 10)]  # someone was there; no print, no name


def test_the_grouping_rules():
    assert group(np.zeros((0, 128))) == [] and group(np.zeros((1, 128))) == [0]
    a, b = np.zeros(128), np.eye(128)[0]  # 1.0 apart
    assert group(np.array([a, b, a + 0.01, b + 0.01])) == [0, 1, 0, 1]
    assert group(np.array([a, a + SAME_PERSON * 0.9 * np.eye(128)[1]])) == [0, 0]
    # Nearest pairs first, one group per known face: both groups are near `a`, only the nearer joins it.
    assert match([a + 0.2 * np.eye(128)[3], a + 0.1 * np.eye(128)[2]], [a, b]) == [None, 0]
    assert match([a], []) == [None]


def test_migration_8_adds_the_face_tables_and_a_faces_job_for_footage_with_keyframes(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'v7.sqlite'}")
    with engine.begin() as conn:
        MIGRATIONS[0](conn)
        for table in ("face_sighting", "face"):
            conn.execute(text(f"DROP TABLE {table}"))  # as version 7 made it
        for step in MIGRATIONS[1:7]:
            step(conn)
        conn.execute(text("PRAGMA user_version=7"))
        conn.execute(
            insert(Footage), [{"id": 1, "content_hash": "a", "path": "/a.mp4"}, {"id": 2, "content_hash": "b", "path": "/b.m4a"}]
        )
        conn.execute(
            insert(Job),
            [{"footage_id": 1, "stage": "keyframes", "state": "done"}, {"footage_id": 2, "stage": "asr", "state": "done"}],
        )
    assert migrate(engine) == len(MIGRATIONS) and migrate(engine) == len(MIGRATIONS)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT footage_id, state FROM job WHERE stage = 'faces'")).all() == [(1, "pending")]
        assert conn.execute(text("SELECT count(*) FROM face_sighting")).scalar_one() == 0
    engine.dispose()
