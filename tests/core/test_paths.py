import pytest

from egodesk.core.paths import LibraryPaths, bundled_models_dir, choose_data_folder, chosen_data_folder


def test_egodesk_home_moves_every_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EGODESK_HOME", str(tmp_path / "lib"))
    paths = LibraryPaths.default().ensure()
    for folder in (paths.cache, paths.logs, paths.thumbnails, paths.indices, paths.user_models):
        assert folder.is_dir() and folder.is_relative_to(tmp_path / "lib")
    assert paths.database.parent == tmp_path / "lib"


def test_bundled_models_follow_override(tmp_path, monkeypatch):
    monkeypatch.setenv("EGODESK_MODELS", str(tmp_path))
    assert bundled_models_dir() == tmp_path


def test_a_chosen_data_folder_is_the_default_library_unless_egodesk_home_is_set(tmp_path, monkeypatch):
    monkeypatch.delenv("EGODESK_HOME", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert chosen_data_folder() is None
    root = choose_data_folder(tmp_path / "my memories")
    assert root == (tmp_path / "my memories").resolve() and (root / "indices").is_dir()
    assert LibraryPaths.default().database == root / "library.sqlite"
    monkeypatch.setenv("EGODESK_HOME", str(tmp_path / "other"))
    assert LibraryPaths.default().root == (tmp_path / "other").resolve()


def test_an_unusable_data_folder_is_refused_and_the_old_choice_kept(tmp_path, monkeypatch):
    monkeypatch.delenv("EGODESK_HOME", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    first = choose_data_folder(tmp_path / "first")
    (tmp_path / "a-file").write_text("not a folder")
    with pytest.raises(OSError):
        choose_data_folder(tmp_path / "a-file")
    assert chosen_data_folder() == first
