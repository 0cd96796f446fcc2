"""Where the app was left: the recent libraries, each library's place, and the library opened at start."""

from __future__ import annotations

import shutil

import pytest

from egodesk.core.appstate import MAX_RECENT, AppState, Place, start_library
from egodesk.core.paths import LibraryPaths, app_state_file, choose_data_folder


@pytest.fixture
def config(tmp_path, monkeypatch):
    """Config and data folders of the test's own (the platform's default library is not the user's), and
    no EGODESK_HOME: the app picks its library itself."""
    for kind in ("CONFIG", "DATA", "STATE", "CACHE"):
        monkeypatch.setenv(f"XDG_{kind}_HOME", str(tmp_path / kind.lower()))
    monkeypatch.delenv("EGODESK_HOME", raising=False)
    return tmp_path / "config"


def make_library(root):
    return LibraryPaths.at(root).ensure().root


def test_recent_libraries_are_newest_first_at_most_eight_and_gone_ones_are_dropped(config, tmp_path):
    state = AppState()
    assert app_state_file().is_relative_to(config) and state.recent() == []
    roots = [make_library(tmp_path / f"lib{i}") for i in range(MAX_RECENT + 2)]
    for root in roots:
        state.opened(root)
    state.opened(roots[3])  # opened again: to the head, not twice
    recent = state.recent()
    assert recent[0] == roots[3] and len(recent) == MAX_RECENT and len(set(recent)) == MAX_RECENT
    assert recent[1:] == [r for r in reversed(roots) if r != roots[3]][: MAX_RECENT - 1]
    shutil.rmtree(recent[1])
    assert recent[1] not in state.recent()  # left out at once
    state.opened(roots[3])
    assert len(state._read()["recent"]) == MAX_RECENT - 1  # and dropped for good when a library is next opened


def test_a_place_is_kept_per_library_and_dropped_with_it(config, tmp_path):
    state = AppState()
    a, b = make_library(tmp_path / "a"), make_library(tmp_path / "b")
    state.opened(a)
    state.opened(b)
    state.leave(a, Place(3, "walk", 5.005))
    state.leave(b, Place(7, "kitchen", 0.0))
    assert AppState().place(a) == Place(3, "walk", 5.005) and AppState().place(b) == Place(7, "kitchen", 0.0)
    state.leave(b, None)  # closed with no footage on show
    assert state.place(b) is None and state.place(a) is not None
    shutil.rmtree(a)
    state.opened(b)
    assert state._read()["places"] == {}  # a's place went with a


def test_a_damaged_state_file_starts_afresh_with_a_warning(config, tmp_path, caplog):
    app_state_file().parent.mkdir(parents=True)
    app_state_file().write_text("{not json", encoding="utf-8")
    state = AppState()
    assert state.recent() == [] and state.place(tmp_path) is None
    root = make_library(tmp_path / "lib")
    state.opened(root)  # and is written anew
    assert "cannot read" in caplog.text
    caplog.clear()
    assert AppState().recent() == [root]


def test_the_last_library_opens_at_start_and_a_gone_one_gives_way_to_the_most_recent(config, tmp_path, monkeypatch):
    assert start_library() == (LibraryPaths.platform(), "")  # a first start
    assert LibraryPaths.platform().root.is_relative_to(tmp_path)
    older, last = make_library(tmp_path / "older"), make_library(tmp_path / "last")
    AppState().opened(older)
    choose_data_folder(last)
    assert start_library() == (LibraryPaths.at(last), "")  # its database not made yet: a library all the same
    shutil.rmtree(last)
    paths, note = start_library()
    assert paths.root == older and not last.exists()  # not made again, empty, where the old one was
    assert str(last) in note and "not there any more" in note and str(older) in note
    shutil.rmtree(older)
    assert start_library()[0] == LibraryPaths.platform()  # nothing recent is left: the default
    monkeypatch.setenv("EGODESK_HOME", str(tmp_path / "named"))
    assert start_library() == (LibraryPaths.at(tmp_path / "named"), "")  # a library named at start is opened as named
