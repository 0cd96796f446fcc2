import json

import pytest

from egodesk.core.settings import Settings, SettingsError


def test_defaults_carry_the_papers_parameters():
    s = Settings()
    assert s.clip_seconds == 15.0 and s.keyframes_per_clip == 5 and s.top_k == 12
    assert s.captioner == "describe" and s.wearer_name == "I"


def test_round_trip_and_env_override(tmp_path):
    path = tmp_path / "settings.json"
    Settings(clip_seconds=20, wearer_name="Ana").save(path)
    loaded = Settings.load(path, environ={"EGODESK_TOP_K": "5"})
    assert loaded.clip_seconds == 20 and loaded.wearer_name == "Ana" and loaded.top_k == 5
    assert json.loads(path.read_text())["version"] == 1


def test_invalid_values_name_the_field(tmp_path):
    with pytest.raises(SettingsError, match="clip_seconds"):
        Settings.load(None, environ={"EGODESK_CLIP_SECONDS": "-3"})
    with pytest.raises(SettingsError, match="captioner"):
        Settings.load(None, environ={"EGODESK_CAPTIONER": "magic"})
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    with pytest.raises(SettingsError, match="unreadable"):
        Settings.load(bad, environ={})


def test_groups_cover_every_field():
    grouped = [name for names in Settings.groups().values() for name in names]
    assert sorted(grouped) == sorted(Settings.model_fields)
    assert "Ingest" in Settings.groups()
