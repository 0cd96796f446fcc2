"""Who was there, through the real pipeline: the walk video (no people) and two photos of a real face
(skimage's astronaut portrait, NASA, public domain: as taken, and mirrored a day later) imported into a
real library and indexed by every stage with the real dlib models; the face listed, named and forgotten
from the terminal, a rerun of the stage changing nothing, and a forgotten face's name and print gone
from every file of the library."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from PIL import ExifTags, Image
from sqlalchemy import select, update

from egodesk.cli import main
from egodesk.core.manifest import ModelMissing, locate
from egodesk.memory.schema import Face, FaceSighting, Job, Unit
from egodesk.pipeline.library import Library
from tests.conftest import WALK_VIDEO, ffmpeg
from tests.pipeline.conftest import assert_no_file_holds

NAME = "Zebedee Quill"


def _photo(path, rgb: np.ndarray, taken: str) -> None:
    tags = Image.Exif()
    tags.get_ifd(ExifTags.IFD.Exif)[ExifTags.Base.DateTimeOriginal] = taken
    Image.fromarray(rgb).save(path, quality=90, exif=tags)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    try:
        locate("faces")
    except ModelMissing:
        pytest.skip("the faces model is installed by ./setup.sh")
    from skimage import data

    media = tmp_path_factory.mktemp("media")
    her = data.astronaut()
    _photo(media / "IMG_0001.jpg", her, "2024:03:13 10:15:00")
    _photo(media / "IMG_0002.jpg", np.ascontiguousarray(her[:, ::-1]), "2024:03:14 09:00:00")
    ffmpeg("-i", str(WALK_VIDEO), "-an", "-c:v", "copy", str(media / "walk.mp4"))  # no sound: what is tested is faces
    library = Library(tmp_path_factory.mktemp("lib"))
    library.save_settings(
        library.settings.model_copy(
            update={"threads": 1, "embedder_model": "embedder", "memory_records": False, "memory_atomic": False}
        )
    )
    assert not library.add(sorted(media.iterdir())).errors
    cpu: dict[tuple[int, str], float] = {}

    def clock(p) -> None:  # CPU time of each footage's faces stage, from its start to its done
        if p.stage == "faces" and p.message in ("started", "done"):
            cpu[(p.footage_id, p.message)] = time.process_time()

    outcome = library.process(progress=clock)
    assert outcome["failed"] == 0, library.job_rows()
    ids = {f.title.split(".")[0]: f.id for f in library.footage()}
    walk = ids["walk"]
    with library.store.session() as s:
        keyframes = s.scalar(select(Job.done).where(Job.footage_id == walk, Job.stage == "keyframes"))
    spent = cpu[(walk, "done")] - cpu[(walk, "started")]
    print(f"faces stage, walk video: {keyframes} keyframes, {spent:.2f} s CPU, {1000 * spent / keyframes:.0f} ms a keyframe")
    yield library, ids
    library.close()


@pytest.fixture
def home(imported, monkeypatch):
    library, ids = imported
    monkeypatch.setenv("EGODESK_HOME", str(library.paths.root))
    return library, ids


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _sightings(library) -> list[tuple[int, int | None, bool]]:
    with library.store.session() as s:
        rows = s.execute(select(FaceSighting.footage_id, FaceSighting.face_id, FaceSighting.vector).order_by(FaceSighting.id))
        return [(footage, face, vector is not None) for footage, face, vector in rows]


def test_the_faces_stage_finds_her_in_both_photos_as_one_face_and_nobody_on_the_walk(imported):
    library, ids = imported
    by_id = {f.id: f for f in library.footage()}
    assert all(by_id[i].stages["faces"] == "done" for i in ids.values())
    assert by_id[ids["walk"]].searchable
    seen = _sightings(library)
    assert sorted(footage for footage, _, _ in seen) == sorted([ids["IMG_0001"], ids["IMG_0002"]])
    [face] = library.faces()
    assert (face.footage, face.sightings) == (2, 2) and {f for _, f, _ in seen} == {face.id}
    assert face.best is not None and face.best[0] in (ids["IMG_0001"], ids["IMG_0002"])
    left, top, right, bottom, width, height = face.best[2:]
    assert (width, height) == (512, 512) and 150 < left < right < 360 and 60 < top < bottom < 200


def test_a_rerun_of_the_stage_changes_nothing(imported):
    library, ids = imported
    before = (_sightings(library), [f.id for f in library.faces()])
    with library.store.session() as s:
        s.execute(update(Job).where(Job.footage_id == ids["IMG_0002"], Job.stage == "faces").values(state="pending"))
    assert library.process()["done"] == 1
    after = _sightings(library)
    assert sorted((footage, face) for footage, face, _ in after) == sorted((footage, face) for footage, face, _ in before[0])
    assert [f.id for f in library.faces()] == before[1]


def test_a_face_picture_is_her_face_cut_from_the_photo_and_kept_in_no_file(imported):
    import cv2

    from egodesk.perception.faces import SAME_PERSON, FaceFinder, distance

    library, _ = imported
    files = sorted(p for p in library.paths.root.rglob("*") if p.is_file())
    [face] = library.faces()
    pictures = library.face_pictures()
    assert list(pictures) == [face.id]
    crop = cv2.imdecode(np.frombuffer(pictures[face.id], np.uint8), cv2.IMREAD_COLOR)
    assert crop.shape == (96, 96, 3)
    [again] = FaceFinder(locate("faces")).find(np.ascontiguousarray(crop[:, :, ::-1]))  # a 96 px picture: doubled
    with library.store.session() as s:
        centroid = np.frombuffer(s.get_one(Face, face.id).centroid, np.float32)
    assert distance(again.vector, centroid) < SAME_PERSON
    assert sorted(p for p in library.paths.root.rglob("*") if p.is_file()) == files
    assert library.face_pictures() == pictures and len(library._face_pictures) == 1  # read again: from memory


def test_faces_are_listed_beside_the_voices_and_named_from_the_terminal(home, capsys):
    library, ids = home
    [face] = library.faces()
    code, out, err = _cli(capsys, "people", "list")
    assert code == 0 and f"F{face.id}" in out and f"Face {face.id}" in out and "1 face" in err, (out, err)
    code, out, _ = _cli(capsys, "people", "list", "--json")
    rows = json.loads(out)
    assert [r for r in rows if r["kind"] == "face"][0]["sightings"] == 2
    for args, reason in [
        (("name", "F999", "Ann"), "no face F999"),
        (("merge", f"F{face.id}", f"F{face.id}"), "with itself"),
        (("merge", f"F{face.id}", "1"), "cannot be merged"),
        (("me", f"F{face.id}"), "for voices"),
        (("forget", "F999"), "no face F999"),
    ]:
        code, _, err = _cli(capsys, "people", *args)
        assert code == 2 and reason in err, (args, err)
    walk_caption = library.clips(ids["walk"])[0].caption
    code, out, err = _cli(capsys, "people", "name", f"f{face.id}", NAME)
    assert code == 0 and NAME in out, err
    for photo in ("IMG_0001", "IMG_0002"):  # where she was seen, the caption and its memory say so
        [clip] = library.clips(ids[photo])
        assert clip.caption.startswith(f"{NAME} is in view. "), clip.caption
        with library.store.session() as s:
            units = s.scalars(select(Unit.text).where(Unit.footage_id == ids[photo], Unit.kind == "caption")).all()
        assert units and all(NAME in text for text in units)
    assert library.clips(ids["walk"])[0].caption == walk_caption  # nobody there: nothing changed


def test_forgetting_a_face_leaves_no_name_or_face_print_in_any_file(home, capsys):
    library, ids = home
    [face] = library.faces()
    if face.name != NAME:
        library.name_face(face.id, NAME)
    with library.store.session() as s:
        prints = [f.centroid for f in s.scalars(select(Face))]
        prints += [v for v in s.scalars(select(FaceSighting.vector)) if v is not None]
    assert len(prints) == 3
    from egodesk.retrieval.base import Memory

    memory = Memory(library.store, library.index_manager, None)
    for kinds in (["caption"], ["subchunk"]):
        memory.lexical(kinds)  # the BM25 indices retrieval saves beside the vector indices
    held = [p for p in library.paths.root.rglob("*") if p.is_file() and b"zebedee" in p.read_bytes().lower()]
    assert any("lexical" in p.parts for p in held), held  # the name is in an index file before...
    assert any(p.name.startswith("library.sqlite") for p in held), held
    code, out, err = _cli(capsys, "people", "forget", f"F{face.id}")
    assert code == 0 and "forgotten; 2 sightings" in out, err
    assert library.faces() == [] and [(face, kept) for _, face, kept in _sightings(library)] == [(None, False)] * 2
    assert library.face_pictures() == {} and library._face_pictures == {}  # its picture is not kept in memory either
    assert not any(NAME in c.caption for photo in ("IMG_0001", "IMG_0002") for c in library.clips(ids[photo]))
    assert_no_file_holds(library, b"zebedee", prints)  # ...and in no file after


@pytest.mark.parametrize("gop", [10, 300], ids=["dense-intra-frames", "sparse-intra-frames"])
def test_the_stage_looks_at_the_very_keyframes_the_keyframes_stage_chose(tmp_path, gop):
    """Intra frames alone are decoded when the keyframes stage read those (dense: a GoPro's every 0.33 s);
    with sparse ones its keyframes are other frames, and every frame is decoded to reach them."""
    from egodesk.media.frames import read_frame_at
    from egodesk.pipeline.engines import Engines
    from egodesk.pipeline.faces import _keyframes, _pictures
    from egodesk.pipeline.stages import StageContext

    video = tmp_path / "walk.mp4"
    ffmpeg("-i", str(WALK_VIDEO), "-t", "4", "-an", "-c:v", "libx264", "-preset", "ultrafast", "-g", str(gop), str(video))
    library = Library(tmp_path / "lib")
    try:
        library.save_settings(library.settings.model_copy(update={"threads": 1, "memory_records": False, "memory_atomic": False}))
        library.add([video])
        [footage] = library.footage()
        ctx = StageContext(
            library.store, Engines(library.settings, library.paths, library.store), footage.id, print, lambda: False
        )
        from egodesk.pipeline.stages import run_keyframes

        run_keyframes(ctx)
        wanted = _keyframes(ctx)
        seen = list(_pictures(ctx, wanted))
        assert [(c, o) for c, o, _ in seen] == wanted and len(wanted) == 5
        for _, offset, rgb in seen:
            assert np.array_equal(rgb[:, :, ::-1], read_frame_at(video, offset)), offset
    finally:
        library.close()


def test_forgetting_an_unnamed_face_purges_its_print_from_every_file(tmp_path):
    from skimage import data

    photo = tmp_path / "IMG_0009.jpg"
    _photo(photo, data.astronaut(), "2024:03:15 12:00:00")
    library = Library(tmp_path / "lib")
    try:
        library.save_settings(library.settings.model_copy(update={"threads": 1, "memory_records": False, "memory_atomic": False}))
        library.add([photo])
        assert library.process()["failed"] == 0
        [face] = library.faces()
        with library.store.session() as s:
            prints = [s.get_one(Face, face.id).centroid, *s.scalars(select(FaceSighting.vector))]
        assert library.forget_face(face.id) == 1 and library.faces() == []
    finally:
        library.close()
    for path in (p for p in library.paths.root.rglob("*") if p.is_file()):
        data_ = path.read_bytes()
        assert all(blob not in data_ for blob in prints), path
