"""`egodesk star|unstar|starred|notes|export` as a person runs them, on a library holding the composite clip;
a refused moment, note or file says why (exit status 2) and changes nothing."""

from __future__ import annotations

import json

import pytest

from egodesk.pipeline.library import Library
from tests.badinput.support import assert_nothing_lost, egodesk, snapshot


@pytest.fixture
def registered(library, composite_clip):
    """The library (EGODESK_HOME) with the composite clip registered, its id."""
    lib = Library(library)
    [footage_id] = lib.add([composite_clip]).added
    lib.close()
    return library, footage_id


def test_star_note_search_and_export_from_the_terminal(registered, tmp_path):
    _, footage_id = registered
    starred = egodesk("star", str(footage_id), "1", "0:04")
    assert starred.returncode == 0, starred.stderr
    assert starred.stdout.startswith("star 1") and "0:00:01-0:00:04" in starred.stdout
    [star] = json.loads(egodesk("starred", "--json").stdout)
    assert (star["footage_id"], star["offset"]) == (footage_id, 1.0)

    added = egodesk("notes", "add", str(footage_id), "2", "5", "the parcel is by the door")
    assert added.returncode == 0, added.stderr
    assert "parcel" in egodesk("search", "parcel").stdout
    assert egodesk("notes", "edit", "1", "the parcel went to the neighbour").returncode == 0
    assert "neighbour" in egodesk("notes").stdout

    out = tmp_path / "moment.mp4"
    exported = egodesk("export", str(footage_id), "1.001", "4", str(out))
    assert exported.returncode == 0, exported.stderr
    assert "stream copy" in exported.stdout and out.stat().st_size > 0

    assert egodesk("notes", "delete", "1").returncode == 0 and egodesk("unstar", "1").returncode == 0
    assert json.loads(egodesk("starred", "--json").stdout) == [] and "parcel" not in egodesk("search", "parcel").stdout


@pytest.mark.badinput
def test_refused_moments_notes_and_files_say_why_and_change_nothing(registered, tmp_path):
    root, footage_id = registered
    assert egodesk("star", str(footage_id), "1", "3").returncode == 0
    assert egodesk("notes", "add", str(footage_id), "1", "3", "keep me").returncode == 0
    library = Library(root)
    before = snapshot(library.store)
    fid = str(footage_id)
    refused = [
        (("star", fid, "5", "99"), "not within"),
        (("star", fid, "4", "2"), "must end after"),
        (("star", fid, "1:99", "2"), "not a time into the footage"),
        (("star", "no-such-footage", "1", "2"), "no footage 'no-such-footage'"),
        (("unstar", "42"), "no star 42"),
        (("notes", "add", fid, "1", "2", "   "), "needs some text"),
        (("notes", "edit", "1", ""), "needs some text"),
        (("notes", "delete", "42"), "no note 42"),
        (("export", fid, "1", "2", str(tmp_path / "missing" / "x.mp4")), "does not exist"),
        (("export", fid, "1", "2", str(tmp_path / "x.avi")), ".mp4"),
        (("export", fid, "8", "60", str(tmp_path / "x.mp4")), "not within"),
    ]
    for args, reason in refused:
        result = egodesk(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert reason in result.stderr and "Traceback" not in result.stderr, (args, result.stderr)
    assert_nothing_lost(before, snapshot(library.store))
    assert [k.text for k in library.kept(("note",))] == ["keep me"] and len(library.kept(("star",))) == 1
    library.close()
    assert not any(tmp_path.glob("*.mp4"))


def test_correct_and_undo_a_misheard_line_from_the_terminal(registered):
    library, footage_id = registered
    lib = Library(library)
    lib.process()  # the line to correct is heard by the real ASR
    lib.close()
    fixed = egodesk("correct", str(footage_id), "0:00:09", "ask what the Zanzibar wombat can do for your country")
    assert fixed.returncode == 0, fixed.stderr
    assert "(corrected): ask what the Zanzibar wombat" in fixed.stdout
    assert "wombat" in egodesk("search", "wombat").stdout
    [row] = json.loads(egodesk("correct", "--list", "--json").stdout)
    assert (row["footage_id"], row["kind"], row["corrected"]) == (footage_id, "speech", True) and "country" in row["heard"]
    undone = egodesk("correct", str(footage_id), "9", "--undo")
    assert undone.returncode == 0 and "(as heard)" in undone.stdout, undone.stderr
    assert "wombat" not in egodesk("search", "wombat").stdout


@pytest.mark.badinput
def test_bad_corrections_from_the_terminal_say_why_and_change_nothing(registered):
    root, footage_id = registered
    library = Library(root)
    library.process()
    before = snapshot(library.store)
    fid = str(footage_id)
    refused = [
        ((fid, "9", ""), "needs some text"),
        ((fid, "9", "x" * 5000), "at most"),
        ((fid, "0:00:59", "words"), "no line heard at 0:00:59"),
        ((fid, "soon", "words"), "is not a time"),
        ((fid, "9"), "say FOOTAGE TIME"),
        ((fid, "9", "words", "--undo"), "say FOOTAGE TIME"),
        ((fid, "9", "--undo"), "no correction to undo"),
        (("nowhere.mp4", "9", "words"), "no footage"),
    ]
    for args, reason in refused:
        result = egodesk("correct", *args)
        assert result.returncode == 2, (args, result.stderr)
        assert reason in result.stderr and "Traceback" not in result.stderr, (args, result.stderr)
    assert_nothing_lost(before, snapshot(library.store))
    library.close()
