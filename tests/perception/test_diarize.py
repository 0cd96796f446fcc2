"""The diarizer's parts on hand-made inputs, and the real voice encoder on a real test-day recording."""

from __future__ import annotations

import numpy as np
import pytest

from egodesk.core.manifest import ModelMissing, locate
from egodesk.perception import diarize as dz


def test_mel_filters_cover_the_band_with_slaney_areas():
    filters = dz.mel_filters()
    assert filters.shape == (dz.MEL_BANDS, dz.N_FFT // 2 + 1)
    assert (filters >= 0).all() and (filters.sum(axis=0)[1:-1] > 0).all()  # no frequency bin left out
    # Slaney normalisation: each triangle's area (in Hz) is 1, so wide high bands are low.
    widths = np.diff(np.linspace(0, dz.SAMPLE_RATE / 2, dz.N_FFT // 2 + 1))[0]
    assert filters.sum(axis=1) * widths == pytest.approx(np.ones(dz.MEL_BANDS), rel=0.15)


def test_mel_power_puts_a_tone_in_its_band_and_scales_with_power():
    t = np.arange(dz.SAMPLE_RATE) / dz.SAMPLE_RATE
    tone = 0.1 * np.sin(2 * np.pi * 1000 * t).astype(np.float32)
    mel = dz.mel_power(tone)
    assert mel.shape == (1 + dz.SAMPLE_RATE // dz.HOP, dz.MEL_BANDS)
    band = int(mel[50].argmax())
    centre = dz._mel_to_hz(np.linspace(0, dz._hz_to_mel(np.array(8000.0)), dz.MEL_BANDS + 2))[band + 1]
    assert abs(centre - 1000) < 100
    assert dz.mel_power(2 * tone)[50].sum() == pytest.approx(4 * mel[50].sum(), rel=1e-4)


def test_windows_cover_each_region_and_a_short_one_is_one_window():
    windows = dz.windows_in([(0.0, 1.0), (2.0, 5.3)])
    assert windows[0] == (0, 0.0, 1.0)
    rest = windows[1:]
    assert rest[0][1] == 2.0 and rest[-1][2] == pytest.approx(5.3)
    assert all(b - a == pytest.approx(dz.WINDOW_S) for _, a, b in rest)
    assert all(n2[1] - n1[1] <= dz.HOP_S + 1e-9 for n1, n2 in zip(rest, rest[1:]))


def test_clustering_separates_two_directions_and_labels_in_order():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=16), rng.normal(size=16)
    points = np.array([a + 0.05 * rng.normal(size=16) for _ in range(3)] + [b + 0.05 * rng.normal(size=16) for _ in range(2)])
    assert dz.cluster_embeddings(points[[3, 0, 1, 4, 2]], 0.3).tolist() == [0, 1, 1, 0, 1]
    assert dz.cluster_embeddings(points[:1]).tolist() == [0]


def test_a_short_pause_between_two_turns_of_one_voice_is_inside_the_turn():
    samples = np.full(10 * dz.SAMPLE_RATE, 0.01, np.float32)
    regions = [(1.0, 2.0), (2.3, 3.0), (4.0, 5.0)]  # pauses of 0.3 s and 1.0 s
    windows = dz.windows_in(regions)
    embeddings = np.tile(np.eye(4)[0], (len(windows), 1)).astype(np.float32)
    result = dz.Diarizer._turns(samples, regions, windows, embeddings, np.zeros(len(windows), int))
    assert [(t.start, t.end) for t in result.turns] == [(1.0, 3.0), (4.0, 5.0)]
    other = dz.Diarizer._turns(samples, regions, windows, embeddings, np.array([0, 1, 0]))
    assert len(other.turns) == 3  # another voice between them: no joining


def _diarization(vectors: dict[int, np.ndarray], seconds: float = 10.0, level: float = -30.0) -> dz.Diarization:
    clusters = [dz.VoiceCluster(label, v / np.linalg.norm(v), seconds, level) for label, v in vectors.items()]
    return dz.Diarization([], clusters)


def test_the_voice_book_matches_across_footage_and_finds_the_wearer():
    me, tom, ann = np.eye(4)[0] + 0.1, np.eye(4)[1] + 0.1, np.eye(4)[2] + 0.1
    book = dz.VoiceBook(similarity=0.8)
    first = book.add("f1", _diarization({0: tom, 1: me}, level=-40))
    second = book.add("f2", _diarization({0: me + 0.05, 1: ann}))
    third = book.add("f3", _diarization({0: ann, 1: me}))
    assert second[0] == first[1] == third[1]  # the same voice in three footage
    assert second[1] == third[0] != first[0]
    assert len(book.voices) == 3
    assert book.wearer() == first[1]


def test_two_clusters_of_one_footage_never_join_one_voice():
    book = dz.VoiceBook(similarity=0.5)
    v = np.array([1.0, 0.2, 0.0])
    book.add("f1", _diarization({0: v}))
    found = book.add("f2", _diarization({0: v, 1: v + np.array([0.0, 0.3, 0.0])}))
    assert found[0] != found[1]


def test_the_wearer_is_the_loudest_on_a_tie_and_none_without_speech():
    book = dz.VoiceBook()
    assert book.wearer() is None
    near = book.add("f1", _diarization({0: np.eye(3)[0]}, level=-20))
    book.add("f1", _diarization({0: np.eye(3)[1]}, level=-35))
    assert book.wearer() == near[0]


def test_the_encoder_tells_two_people_of_a_real_recording_apart():
    try:
        model = locate("voice")
    except ModelMissing:
        pytest.skip("the voice model is installed by ./setup.sh")
    from benchmarks.testday.make_day import make_day, plan_of
    from benchmarks.testday.speakers import turns_of
    from egodesk.eval.diarization import der

    plan = plan_of("real")
    [recording] = [r for r in plan if r.name == "20261130_074000"]  # Sam and the wearer, at home
    [path] = make_day(plan=(recording,), log=lambda *_: None)
    from faster_whisper import decode_audio

    samples = decode_audio(str(path), sampling_rate=dz.SAMPLE_RATE)
    result = dz.Diarizer(dz.VoiceEncoder(model, threads=1)).diarize(samples)
    reference = [(t.speaker, t.start, t.end) for t in turns_of((recording,))[recording.name]]
    hypothesis = [(str(t.label), t.start, t.end) for t in result.turns]
    assert len(result.clusters) == 2
    assert der(reference, hypothesis) < 0.1
    assert all(np.linalg.norm(c.centroid) == pytest.approx(1.0, abs=1e-5) for c in result.clusters)
