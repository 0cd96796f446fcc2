from egodesk.core.paths import LibraryPaths, bundled_models_dir


def test_egodesk_home_moves_every_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EGODESK_HOME", str(tmp_path / "lib"))
    paths = LibraryPaths.default().ensure()
    for folder in (paths.cache, paths.logs, paths.thumbnails, paths.indices, paths.user_models):
        assert folder.is_dir() and folder.is_relative_to(tmp_path / "lib")
    assert paths.database.parent == tmp_path / "lib"


def test_bundled_models_follow_override(tmp_path, monkeypatch):
    monkeypatch.setenv("EGODESK_MODELS", str(tmp_path))
    assert bundled_models_dir() == tmp_path
