"""Speech recognition with the real Whisper models from the manifest (JFK speech, silence, bad input)."""

from __future__ import annotations

import re
import time
import wave
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from egodesk.core.settings import Settings
from egodesk.perception import asr
from egodesk.perception.asr import FasterWhisperTranscriber, TranscriptionError, make_transcriber
from tests.conftest import JFK_AUDIO


@pytest.fixture(scope="module")
def base():
    return make_transcriber(Settings(threads=2))


def _plain(text: str) -> str:
    return re.sub(r"[^a-z ]", "", text.lower())


def _silent_wav(path, seconds=3.0):
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(np.zeros(int(seconds * 16000), np.int16).tobytes())
    return path


def test_jfk_words_times_and_language(base):
    started = time.perf_counter()
    result = base.transcribe(JFK_AUDIO)
    elapsed = time.perf_counter() - started
    print(
        f"\nASR base int8, 2 threads, beam 1, language detection: {elapsed:.2f} s for {result.duration:.1f} s "
        f"audio, real-time factor {elapsed / result.duration:.3f}"
    )
    assert result.language == "en" and result.duration == pytest.approx(11.0, abs=0.1)
    assert "ask not what your country can do for you" in _plain(result.text)
    words = [w for s in result.segments for w in s.words]
    americans = next(w for w in words if _plain(w.text) == "americans")
    assert abs(americans.start - 1.8) < 0.5 and americans.end > americans.start
    assert all(0.0 <= w.probability <= 1.0 for w in words)
    assert "my fellow americans" in _plain(result.text_between(0.0, 3.0))
    assert "country" not in _plain(result.text_between(0.0, 3.0))


def test_silence_gives_no_segments(base, tmp_path):
    result = base.transcribe(_silent_wav(tmp_path / "silence.wav"))
    assert result.segments == () and result.text == "" and result.duration == pytest.approx(3.0, abs=0.05)
    assert result.language is None  # a language "detected" on silence would be a guess


def test_video_without_audio_stream_is_an_empty_transcript(base, silent_clip):
    assert base.transcribe(silent_clip).segments == ()


def test_lite_model_with_language_given():
    lite = make_transcriber(Settings(asr_model="asr-lite", threads=2))
    assert isinstance(lite, FasterWhisperTranscriber) and lite.model_dir.name == "asr-lite"
    result = lite.transcribe(JFK_AUDIO, language="en")
    assert result.language == "en" and "fellow americans" in _plain(result.text)


def test_bad_input_names_the_file(base, tmp_path):
    with pytest.raises(TranscriptionError, match="nowhere.wav"):
        base.transcribe(tmp_path / "nowhere.wav")
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"not audio at all")
    with pytest.raises(TranscriptionError, match="junk.wav"):
        base.transcribe(junk)


def test_openai_whisper_engine_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(asr.importlib.util, "find_spec", lambda name: None)
    settings = Settings(asr_engine="openai-whisper")
    with pytest.raises(TranscriptionError, match=r"openai-whisper is not installed; pip install openai-whisper --no-deps"):
        make_transcriber(settings, tmp_path)


def test_openai_whisper_engine_never_takes_a_model_name(monkeypatch, tmp_path):
    monkeypatch.setattr(asr.importlib.util, "find_spec", lambda name: object())  # pretend it is installed
    with pytest.raises(TranscriptionError, match="openai-whisper/base.pt"):
        make_transcriber(Settings(asr_engine="openai-whisper"), tmp_path)


class _Detecting:
    """Says the language and its probability a noisy recording's detection gave; transcribes as asked."""

    def __init__(self, detected: str, probability: float):
        self.detected, self.probability, self.asked = detected, probability, []

    def transcribe(self, audio_path, language=None):
        self.asked.append(language)
        heard = language or self.detected
        return asr.Transcript(heard, (), 1.0, "double", 1.0 if language else self.probability)


@pytest.mark.parametrize(
    ("detected", "probability", "usual", "asked", "language"),
    [
        ("cy", 0.55, "en", [None, "en"], "en"),  # café babble taken for Welsh: the library's English
        ("de", 0.95, "en", [None], "de"),  # a sure detection of another language is kept
        ("cy", 0.55, None, [None], "cy"),  # the library's first recording: nothing to overrule with
        ("en", 0.58, "en", [None], "en"),  # unsure but the usual language: one pass
    ],
)
def test_an_unsure_language_detection_is_overruled_by_the_librarys_usual_language(detected, probability, usual, asked, language):
    transcriber = _Detecting(detected, probability)
    assert asr.transcribe_as_usual(transcriber, Path("x.wav"), usual).language == language
    assert transcriber.asked == asked


def test_a_sure_detection_keeps_its_language_with_the_real_model(base):
    transcript = asr.transcribe_as_usual(base, JFK_AUDIO, "de")
    assert transcript.language == "en" and transcript.language_probability >= asr.LANGUAGE_TRUST


def test_a_recognised_sentence_keeps_its_numbers_whole():
    # faster-whisper's words carry their own leading space; "12,000" comes as " 12" and ",000".
    raw = [(" The", 0.0), (" budget", 0.3), (" is", 0.6), (" 12", 0.9), (",000", 1.1), (" euros.", 1.3), (" Thanks.", 2.0)]
    words = [SimpleNamespace(word=w, start=t, end=t + 0.2, probability=0.9) for w, t in raw]
    segment = SimpleNamespace(words=words, text="".join(w for w, _ in raw), start=0.0, end=2.2)
    assert [s.text for s in asr._sentences(segment)] == ["The budget is 12,000 euros.", "Thanks."]
