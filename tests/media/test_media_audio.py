"""extract_audio: mono 16 kHz WAV when there is sound, False when there is none, MediaError on failure."""

from __future__ import annotations

import os
import wave

import pytest

from egodesk.media.audio import extract_audio
from egodesk.media.errors import MediaError
from tests.conftest import JFK_AUDIO


def wav_facts(path) -> tuple[int, int, int, float]:
    with wave.open(str(path), "rb") as wav:
        return wav.getnchannels(), wav.getframerate(), wav.getsampwidth(), wav.getnframes() / wav.getframerate()


def test_composite_clip_soundtrack(composite_clip, tmp_path):
    out = tmp_path / "audio" / "clip.wav"
    assert extract_audio(composite_clip, out) is True
    channels, rate, width, seconds = wav_facts(out)
    assert (channels, rate, width) == (1, 16000, 2)
    assert seconds == pytest.approx(10.5, abs=0.2)
    assert os.listdir(out.parent) == ["clip.wav"]  # the temp file was renamed, nothing left over


def test_other_sample_rate_and_audio_only_input(tmp_path):
    out = tmp_path / "jfk.wav"
    assert extract_audio(JFK_AUDIO, out, sample_rate=8000)
    channels, rate, _, seconds = wav_facts(out)
    assert (channels, rate) == (1, 8000) and seconds == pytest.approx(11.0, abs=0.1)


@pytest.mark.badinput
def test_no_audio_stream_is_not_an_error(silent_clip, tmp_path):
    out = tmp_path / "none.wav"
    assert extract_audio(silent_clip, out) is False
    assert not out.exists() and os.listdir(tmp_path) == []


@pytest.mark.badinput
def test_unreadable_input_raises(tmp_path):
    bogus = tmp_path / "notes.mp4"
    bogus.write_text("not a video")
    with pytest.raises(MediaError) as caught:
        extract_audio(bogus, tmp_path / "out.wav")
    assert str(caught.value).startswith(f"{bogus}: cannot read the file")
    assert sorted(os.listdir(tmp_path)) == ["notes.mp4"]


def test_ffmpeg_failure_raises_and_leaves_nothing(small_av_clip, tmp_path, monkeypatch):
    """ffmpeg fails (a stand-in that exits 1): MediaError with its message, and the temp file is gone."""
    fake = tmp_path / "bin" / "ffmpeg"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'Conversion failed!' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    out_dir = tmp_path / "out"
    with pytest.raises(MediaError, match=r"audio extraction failed \(Conversion failed!\)"):
        extract_audio(small_av_clip, out_dir / "x.wav")
    assert os.listdir(out_dir) == []


def test_bad_sample_rate(small_av_clip, tmp_path):
    with pytest.raises(ValueError, match="sample_rate"):
        extract_audio(small_av_clip, tmp_path / "x.wav", sample_rate=0)
