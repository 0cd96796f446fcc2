"""The person's vocabulary (Settings > Vocabulary): kept tidy by the settings schema, told to the speech
recogniser only when set, and taken by search as the right spelling of a word typed or heard alike."""

from __future__ import annotations

import pytest

from egodesk.core.settings import VOCABULARY_MAX_CHARS, VOCABULARY_MAX_WORDS, Settings, SettingsError
from egodesk.memory.schema import Footage, TranscriptSegment
from egodesk.perception.asr import make_transcriber, vocabulary_prompt
from egodesk.pipeline.library import Library
from tests.conftest import JFK_AUDIO

DAY = 1_780_000_000.0


def test_the_list_is_tidied_and_bad_lists_are_refused(tmp_path):
    settings = Settings(vocabulary=["  Katrina ", "", "Ty   Hafan", "katrina", "pétanque"])
    assert settings.vocabulary == ["Katrina", "Ty Hafan", "pétanque"]  # repeats (case aside) and blanks dropped
    assert Settings.load(None, {"EGODESK_VOCABULARY": "Katrina, Ty Hafan\npétanque"}).vocabulary == settings.vocabulary
    with pytest.raises(ValueError, match="longer than"):
        Settings(vocabulary=["x" * (VOCABULARY_MAX_CHARS + 1)])
    with pytest.raises(ValueError, match=f"at most {VOCABULARY_MAX_WORDS}"):
        Settings(vocabulary=[f"word{i}" for i in range(VOCABULARY_MAX_WORDS + 1)])
    path = tmp_path / "settings.json"
    settings.save(path)
    assert Settings.load(path).vocabulary == settings.vocabulary
    path.write_text('{"version": 1, "values": {"vocabulary": 7}}')
    with pytest.raises(SettingsError):
        Settings.load(path)


def test_recognition_is_told_the_words_only_when_there_are_some():
    assert vocabulary_prompt(Settings()) is None  # Whisper as measured (hotwords are no clear gain in general)
    settings = Settings(threads=2, vocabulary=["Katrina", "Ty Hafan"])
    assert vocabulary_prompt(settings) == "Katrina, Ty Hafan"
    transcriber = make_transcriber(settings)
    assert transcriber.hotwords == "Katrina, Ty Hafan"
    heard = transcriber.transcribe(JFK_AUDIO).text.lower()  # the real model takes them
    assert "ask not what your country can do for you" in heard


def test_search_takes_the_persons_words_as_the_right_spelling(tmp_path):
    library = Library(tmp_path / "lib")
    try:
        with library.store.session() as s:
            footage = Footage(content_hash="h", path="/v.mp4", title="walk", start_ts=DAY, duration=60)
            s.add(footage)
            s.flush()
            s.add(
                TranscriptSegment(
                    footage_id=footage.id, idx=0, start_ts=DAY + 1, end_ts=DAY + 4, text="I met Catreena by the pond"
                )
            )
        assert library.search("Kathrina").hits == []  # typed amiss, and heard amiss: nothing alike enough
        library.save_settings(Settings(vocabulary=["Katrina"]))
        result = library.search("Kathrina")
        assert [h.text for h in result.hits] == ["I met Catreena by the pond"]  # Kathrina ~ Katrina ~ Catreena
        assert result.alike == {"kathrina": ["katrina", "catreena"]}
        assert [h.text for h in library.search("katrina").hits] == ["I met Catreena by the pond"]
    finally:
        library.close()
